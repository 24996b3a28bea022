import Logging
import StatusPolling

/// Bootstraps swift-log: lines on stderr, so stdout holds only the report.
package enum LogSetup {
    package static func make(level: Logger.Level, format: LogFormat = .text) -> Logger {
        LoggingSystem.bootstrap { label in
            switch format {
            case .text:
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            case .json:
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
        }
        var logger = Logger(label: "status-poller")
        logger.logLevel = level
        return logger
    }
}
