import ArgumentParser
import Foundation
import PollerCommandLine
import ReportPage
import StatusPolling

extension StatusPoller {
    /// `status-poller report`: what billing retry, grace periods and churn did, from the audit trail.
    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recovery and churn from the audit trail: one HTML page with charts, or the same numbers as JSON.",
            discussion: """
                Reads the trail in one pass (a page at a time). Billing-issue episodes and their recovery curve, the \
                subscriptions by state per day, movement per week, churn by expiration intent, refunds, and the runs.
                """)

        enum Format: String, ExpressibleByArgument, CaseIterable { case html, json, csv }

        @OptionGroup var storeOptions: StoreOptions

        @Option(help: "First day (YYYY-MM-DD, UTC). Default: the trail's first day.")
        var from: String?

        @Option(help: "Last day (YYYY-MM-DD, UTC), included. Default: today.")
        var to: String?

        @Option(help: "Production, Sandbox or all.")
        var environment = "Production"

        @Option(help: "html, json, or csv (a directory with one file per series).")
        var format: Format = .html

        @Option(help: "Where to write it; - for stdout (html, json). Default: status-poller-report.html, .json, or the directory status-poller-report-csv.")
        var output: String?

        func validate() throws {
            for (name, value) in [("--from", from), ("--to", to)] {
                if let value, Self.day(value) == nil { throw ValidationError("\(name) must be a date like 2026-11-01, got '\(value)'.") }
            }
            if let from, let to, let first = Self.day(from), let last = Self.day(to), first > last {
                throw ValidationError("--from (\(from)) is after --to (\(to)).")
            }
            if format == .csv, output == "-" { throw ValidationError("--format csv writes a directory of files: give --output DIR, not -.") }
            guard ["Production", "Sandbox", "all"].contains(environment) else {
                throw ValidationError("--environment must be Production, Sandbox or all, got '\(environment)'.")
            }
        }

        /// 00:00 UTC of a `YYYY-MM-DD` day, ms.
        static func day(_ text: String) -> Int64? {
            guard let date = ISO8601.parse(text + "T00:00:00Z") else { return nil }
            return Int64(date.timeIntervalSince1970 * 1000)
        }

        func run() async throws {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let toMs = to.flatMap(Self.day).map { $0 + 86_400_000 } ?? (now - now % 86_400_000 + 86_400_000)
            let directory = output ?? "status-poller-report-csv"
            // CSV: episodes.csv is written while the trail is read, one line per episode as it closes.
            let episodeLines: EpisodeCSV?
            if format == .csv {
                do {
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                    episodeLines = try EpisodeCSV(path: directory + "/episodes.csv", endMs: toMs)
                } catch {
                    throw usageError("cannot write \(directory): \(error.localizedDescription)")
                }
            } else {
                episodeLines = nil
            }
            let report = try await storeOptions.withStore(try await storeOptions.settings()) { (store: any PollingStore, _) in
                // The ledger's sums, beside the trail's pass (the database's work on the other core).
                async let sums = store.revenueSums(toMs: toMs, environment: environment == "all" ? nil : environment)
                var report = try await TrailReport.read(
                    store, runs: try await store.runs(last: 100_000), fromMs: from.flatMap(Self.day), toMs: toMs,
                    environment: environment == "all" ? nil : environment, generatedAtMs: now, onEpisode: episodeLines.map { lines in { lines.write($0) } })
                // Apple's refund requests and the answers, beside the trail (JSON and CSV).
                let requests = try await store.consumptionRequests(ConsumptionQuery(limit: Int(Int32.max)))
                report.refundRequests = RefundRequestReport(
                    requests.filter { environment == "all" || ($0.environment ?? .production).rawValue == environment }, fromMs: report.fromMs, toMs: report.toMs)
                report.revenue = RevenueReport(try await sums, fromMs: report.fromMs, toMs: report.toMs)
                return report
            }
            if let episodeLines { return try writeCSV(report, episodes: episodeLines, to: directory) }
            let text = format == .html ? try ReportPage.html(report) : try report.json() + "\n"
            let path = output ?? "status-poller-report.\(format.rawValue)"
            if path == "-" { return print(text, terminator: "") }
            do {
                try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw usageError("cannot write \(path): \(error.localizedDescription)")
            }
            say("wrote \(path): \(report.episodes.total) billing-issue episodes, \(report.stateMix.count) days, \(report.runs.count) runs")
        }

        func writeCSV(_ report: TrailReport, episodes: EpisodeCSV, to directory: String) throws {
            let files = report.csv()
            do {
                try episodes.finish()
                for (name, text) in files {
                    try Data(text.utf8).write(to: URL(fileURLWithPath: directory).appendingPathComponent(name), options: .atomic)
                }
            } catch {
                throw usageError("cannot write \(directory): \(error.localizedDescription)")
            }
            say("wrote \(files.count + 1) CSV files to \(directory)/: \(episodes.lines) billing-issue episodes, \(report.stateMix.count) days")
        }
    }
}
