import Foundation
import Testing

/// The README is a front page and the rest lives in docs/: every relative link between them must
/// land on a file that exists and, with a `#fragment`, on one of its headings.
@Suite struct DocumentationLinksTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    /// GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens.
    static func anchor(_ heading: String) -> String {
        heading.lowercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) || $0 == " " || $0 == "-" || $0 == "_" }
            .map(String.init).joined().replacingOccurrences(of: " ", with: "-")
    }

    static func anchors(of file: URL) throws -> Set<String> {
        let text = try String(contentsOf: file, encoding: .utf8)
        var inCode = false
        var found: Set<String> = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode, line.hasPrefix("#") else { continue }
            found.insert(anchor(line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)))
        }
        return found
    }

    @Test func everyRelativeLinkLandsOnAFileAndAHeading() throws {
        let docs = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        #expect(docs.count >= 10)
        let link = try Regex(#"\]\(([^)\s]+)\)"#)
        var checked = 0
        for page in ["README.md"] + docs {
            let file = Self.root.appendingPathComponent(page)
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: link) {
                let target = String(match.output[1].substring ?? "")
                guard !target.hasPrefix("http"), !target.hasPrefix("mailto:") else { continue }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let path = String(parts[0])
                let destination = path.isEmpty ? file : file.deletingLastPathComponent().appendingPathComponent(path).standardized
                #expect(FileManager.default.fileExists(atPath: destination.path), "\(page) links to \(target)")
                if parts.count == 2, destination.pathExtension == "md", FileManager.default.fileExists(atPath: destination.path) {
                    #expect(try Self.anchors(of: destination).contains(String(parts[1])), "\(page) links to \(target)")
                }
                checked += 1
            }
        }
        #expect(checked > 50)
    }

    @Test func theReadmeStaysAFrontPage() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(text.filter { $0 == "\n" }.count <= 250)  // lines, as `wc -l` counts them
    }
}
