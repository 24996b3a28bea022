import ArgumentParser
import Foundation
import StatusPolling

extension StatusPoller {
    /// `status-poller runs`: the run history, newest first.
    struct Runs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List past runs, newest first: when, what, counts by outcome, exit code.")

        @OptionGroup var storeOptions: StoreOptions

        @Option(help: "How many runs.")
        var last = 20

        @Option(help: "Output: text or json.")
        var format: ReportFormat = .text

        func run() async throws {
            try await storeOptions.withStore(try await storeOptions.settings()) { store, database in
                let runs = try await store.runs(last: max(1, last))
                switch format {
                case .json:
                    let rows: [[String: Any]] = runs.map { run in
                        var o: [String: Any] = [
                            "id": run.id, "mode": run.mode.rawValue, "status": run.status.rawValue, "started_at": Display.time(run.startedAtMs),
                            "run_clock": Display.time(run.nowMs), "host": run.host, "pid": run.pid, "options": run.options, "checkpoint_id": run.checkpointID,
                        ]
                        if let finished = run.finishedAtMs { o["finished_at"] = Display.time(finished) }
                        // PostgreSQL: which worker ran it, and the night's or backfill's shared work it took part in.
                        if let worker = run.worker { o["worker"] = worker }
                        if let work = run.workID { o["work_id"] = work }
                        if let report = run.report, let object = try? JSONSerialization.jsonObject(with: Data(report.utf8)) { o["report"] = object }
                        return o
                    }
                    print(String(decoding: try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys]), as: UTF8.self))
                case .text:
                    guard !runs.isEmpty else { return print("no runs yet in \(database)") }
                    print("   id  mode      status       started (UTC)          took     selected verified  updated   failed  exit")
                    for run in runs {
                        let took = run.finishedAtMs.map { Display.seconds(Double($0 - run.startedAtMs) / 1000) } ?? "-"
                        print([
                            String(run.id).leftPadded(5), run.mode.rawValue.padded(9), run.status.rawValue.padded(12),
                            Display.time(run.startedAtMs).padded(22), took.leftPadded(6),
                            Display.count(run.selected).leftPadded(11), Display.count(run.verified).leftPadded(8),
                            Display.count(run.updated).leftPadded(8), Display.count(run.failed).leftPadded(8),
                            run.exitCode.map(String.init).map { $0.leftPadded(5) } ?? "    -",
                        ].joined(separator: " ") + (run.mode == .backfill ? "  targets \(Display.count(run.targets)), checkpoint \(run.checkpointID)" : ""))
                    }
                }
            }
        }
    }
}
