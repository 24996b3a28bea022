import Foundation

/// The facts recorded when a run starts.
public struct RunStart: Sendable, Equatable {
    public var mode: RunMode
    /// The run's clock (`--now`), ms.
    public var nowMs: Int64
    /// The wall clock at the start, ms.
    public var startedAtMs: Int64
    public var host: String
    public var pid: Int32
    /// The settings, for the history (never the secret).
    public var options: [String: String]
    /// The build that runs it (`status-poller --version` in one line), when the executable gave it:
    /// `poll_runs.version`.
    public var version: String?

    public init(mode: RunMode, nowMs: Int64, startedAtMs: Int64, host: String, pid: Int32, options: [String: String], version: String? = nil) {
        self.mode = mode
        self.nowMs = nowMs
        self.startedAtMs = startedAtMs
        self.host = host
        self.pid = pid
        self.options = options
        self.version = version
    }

    /// This process, now.
    public static func current(mode: RunMode, nowMs: Int64, options: [String: String], version: String? = nil) -> RunStart {
        RunStart(
            mode: mode, nowMs: nowMs, startedAtMs: Int64(Date().timeIntervalSince1970 * 1000),
            host: ProcessInfo.processInfo.hostName, pid: ProcessInfo.processInfo.processIdentifier, options: options, version: version)
    }
}
