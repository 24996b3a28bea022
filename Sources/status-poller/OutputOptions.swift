import ArgumentParser
import Logging
import PollerCommandLine

/// What a run prints and writes besides the database.
struct OutputOptions: ParsableArguments {
    @Option(help: "Report format on stdout: text or json (default: text).")
    var report: ReportFormat?

    @Option(help: "Log level on stderr: trace, debug, info, notice, warning, error, critical (default: info).")
    var logLevel: Logger.Level?

    @Option(help: "Log format on stderr: text (for people) or json (one object per line) (default: text).")
    var logFormat: LogFormat?

    @Option(help: "Write Prometheus metrics (text format) to this file at the end of the run, for node_exporter's textfile collector.")
    var metricsFile: String?

    func resolve(_ settings: Settings) throws -> OutputSettings {
        func parsed<T: RawRepresentable>(_ option: T?, _ key: String, _ fallback: T) throws -> T where T.RawValue == String {
            if let option { return option }
            guard let text = settings.string(nil, key) else { return fallback }
            guard let value = T(rawValue: text) else { throw usageError("\(key) cannot be '\(text)'.") }
            return value
        }
        return OutputSettings(
            report: try parsed(report, "report", .text), logLevel: try parsed(logLevel, "log_level", .info),
            logFormat: try parsed(logFormat, "log_format", .text), metricsFile: settings.string(metricsFile, "metrics_file"))
    }
}
