import Foundation
import Logging

/// Writes one JSON object per line to stderr (`--log-format json`), for the journal or a log
/// shipper: time, level, label, message and every metadata key (the run id among them).
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable (String) -> Void

    public init(label: String, write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }) {
        self.label = label
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: Any] = [
            "time": Date().formatted(.iso8601.time(includingFractionalSeconds: true).year().month().day().dateTimeSeparator(.standard)),
            "level": event.level.rawValue,
            "label": label,
            "message": event.message.description,
        ]
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        for (key, value) in merged { object[key] = Self.plain(value) }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        write(String(decoding: data, as: UTF8.self))
    }

    static func plain(_ value: Logger.MetadataValue) -> Any {
        switch value {
        case .string(let s): return s
        case .stringConvertible(let s): return s.description
        case .array(let a): return a.map(plain)
        case .dictionary(let d): return d.mapValues(plain)
        }
    }
}
