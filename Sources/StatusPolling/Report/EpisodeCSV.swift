import Foundation

/// `episodes.csv`, written as the report's episodes close (then the open ones): one line each,
/// however many, without holding them. Written to a temporary name and renamed when complete.
public final class EpisodeCSV {
    public static let header = ["subscription_id", "day_0", "seen_at", "grace_ends", "outcome", "closed_at", "days", "recovered_in_grace"]

    private let path: String
    private let handle: FileHandle
    private var buffer = ""
    private let endMs: Int64
    /// The first write that failed, thrown by ``finish()``.
    private var failure: (any Error)?
    public private(set) var lines = 0

    /// Starts `path`; `endMs` (the report's end) censors the open episodes' days.
    public init(path: String, endMs: Int64) throws {
        self.path = path
        self.endMs = endMs
        guard FileManager.default.createFile(atPath: path + ".partial", contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path + ".partial"))
        buffer = Self.header.joined(separator: ",") + "\n"
    }

    public func write(_ e: BillingEpisode) {
        let fields = [
            String(e.subscriptionID), TrailReport.instant(e.startMs), TrailReport.instant(e.seenAtMs), e.graceEndsMs.map(TrailReport.instant) ?? "",
            e.outcome?.rawValue ?? "open", e.closedAtMs.map(TrailReport.instant) ?? "", String(e.days(endMs: endMs)), e.recoveredInGrace ? "1" : "0",
        ]
        buffer += fields.joined(separator: ",") + "\n"
        lines += 1
        if buffer.utf8.count >= 1 << 16 { flush() }
    }

    /// The rest written and the file under its name.
    public func finish() throws {
        flush()
        try handle.close()
        if let failure { throw failure }
        _ = try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(atPath: path + ".partial", toPath: path)
    }

    private func flush() {
        guard failure == nil else { return buffer = "" }
        do { try handle.write(contentsOf: Data(buffer.utf8)) } catch { failure = error }
        buffer = ""
    }
}
