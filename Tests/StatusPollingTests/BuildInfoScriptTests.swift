import Foundation
import PollingDemo
import Testing

/// `Scripts/build-info.sh`, which the build-tool plugin runs before every build: the version from a
/// `v*` tag, the commit with `+dirty`, `unknown` without git, and no rewrite while nothing changed
/// (so an incremental build recompiles nothing).
@Suite struct BuildInfoScriptTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Scripts/build-info.sh")

    /// Runs `executable arguments` in `directory`; the exit status.
    @discardableResult
    func run(_ executable: String, _ arguments: [String], in directory: URL, environment: [String: String] = [:]) async throws -> Int32 {
        let env = ProcessInfo.processInfo.environment.merging(
            ["GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost"]
        ) { $1 }.merging(environment) { $1 }
        return try await ChildProcess.run(executable, arguments, in: directory, environment: env).end.code
    }

    func git(_ arguments: [String], in directory: URL) async throws {
        #expect(try await run("/usr/bin/env", ["git"] + arguments, in: directory) == 0, "git \(arguments)")
    }

    /// Generates the file for `package` and returns its text.
    func generate(_ package: URL, into output: URL, environment: [String: String] = [:]) async throws -> String {
        #expect(try await run("/bin/sh", [Self.script.path, package.path, output.path], in: package, environment: environment) == 0)
        return try String(contentsOf: output, encoding: .utf8)
    }

    func withDirectory<R>(_ body: (URL) async throws -> R) async throws -> R {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-build-info-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    @Test func withoutGitTheCommitIsUnknownAndTheDateIsUTC() async throws {
        try await withDirectory { directory in
            let text = try await generate(directory, into: directory.appendingPathComponent("out/BuildInfo+Generated.swift"))
            #expect(text.contains(#"static let tagVersion: String? = nil"#))
            #expect(text.contains(#"static let commit = "unknown""#))
            #expect(text.contains(/static let buildDate = "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"/))
            let pinned = try await generate(directory, into: directory.appendingPathComponent("out/Pinned.swift"), environment: ["SOURCE_DATE_EPOCH": "0"])
            #expect(pinned.contains(#"static let buildDate = "1970-01-01T00:00:00Z""#))
        }
    }

    @Test func aTagNamesTheVersionAChangeMarksItDirtyAndNothingChangedRewritesNothing() async throws {
        try await withDirectory { directory in
            let package = directory.appendingPathComponent("package")
            try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
            let output = directory.appendingPathComponent("out/BuildInfo+Generated.swift")
            try await git(["init", "-q"], in: package)
            try Data("one\n".utf8).write(to: package.appendingPathComponent("file"))
            try await git(["add", "file"], in: package)
            try await git(["commit", "-q", "-m", "one"], in: package)
            try await git(["tag", "v1.2.3"], in: package)

            let tagged = try await generate(package, into: output)
            #expect(tagged.contains(#"static let tagVersion: String? = "1.2.3""#))
            #expect(tagged.contains(/static let commit = "[0-9a-f]{7,40}"/))
            // Nothing changed: the file is not written again (its modification date, set far back, stays).
            let longAgo = Date(timeIntervalSince1970: 1_000_000_000)
            try FileManager.default.setAttributes([.modificationDate: longAgo], ofItemAtPath: output.path)
            #expect(try await generate(package, into: output) == tagged)
            #expect(try FileManager.default.attributesOfItem(atPath: output.path)[.modificationDate] as? Date == longAgo)

            try Data("two\n".utf8).write(to: package.appendingPathComponent("file"))
            let dirty = try await generate(package, into: output)
            #expect(dirty.contains(/static let commit = "[0-9a-f]{7,40}\+dirty"/))

            try await git(["commit", "-q", "-a", "-m", "two"], in: package)
            let untagged = try await generate(package, into: output)
            #expect(untagged.contains(#"static let tagVersion: String? = nil"#))
            #expect(!untagged.contains("+dirty"))
        }
    }
}
