import Logging
import PollerCommandLine

struct OutputSettings {
    var report: ReportFormat
    var logLevel: Logger.Level
    var logFormat: LogFormat
    var metricsFile: String?
}
