import Foundation
import Logging
import Synchronization

/// Shows a long run's progress: a line redrawn on stderr when it is a terminal, a log line every
/// 30 seconds otherwise (cron, systemd).
public final class ProgressReporter: Sendable {
    private let logger: Logger
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private let last = Mutex<(drawn: ContinuousClock.Instant?, shown: Bool)>((nil, false))

    public init(logger: Logger) { self.logger = logger }

    public func update(_ progress: RunProgress) {
        let now = ContinuousClock.now
        let interval: Duration = isTerminal ? .milliseconds(250) : .seconds(30)
        let due = last.withLock { state -> Bool in
            if let drawn = state.drawn, now - drawn < interval { return false }
            state.drawn = now
            state.shown = true
            return true
        }
        guard due, progress.total > 0 else { return }
        let eta = progress.secondsLeft.map { Self.duration($0) } ?? "?"
        let rate = String(format: "%.1f", progress.rate)
        if isTerminal {
            FileHandle.standardError.write(Data("\r\u{1B}[K\(progress.done)/\(progress.total) subscriptions  \(rate)/s  ETA \(eta)  failed \(progress.failed)".utf8))
        } else {
            logger.notice("progress", metadata: ["done": "\(progress.done)", "total": "\(progress.total)", "rate_per_s": "\(rate)", "eta": "\(eta)", "failed": "\(progress.failed)"])
        }
    }

    /// Ends the terminal line.
    public func finish() {
        if isTerminal, last.withLock({ $0.shown }) { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? "\(s / 3600)h\(String(format: "%02d", s % 3600 / 60))m" : s >= 60 ? "\(s / 60)m\(String(format: "%02d", s % 60))s" : "\(s)s"
    }
}
