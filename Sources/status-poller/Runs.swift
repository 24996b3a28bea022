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

        /// One run as a row of the table.
        static func line(_ run: RunRecord) -> String {
            let took = run.finishedAtMs.map { Display.seconds(Double($0 - run.startedAtMs) / 1000) } ?? "-"
            let backfill = run.workID == nil ? "  targets \(Display.count(run.targets)), checkpoint \(run.checkpointID)" : ""
            return [
                String(run.id).leftPadded(5), run.mode.rawValue.padded(9), run.status.rawValue.padded(12),
                Display.time(run.startedAtMs).padded(22), took.leftPadded(6),
                Display.count(run.selected).leftPadded(11), Display.count(run.verified).leftPadded(8),
                Display.count(run.updated).leftPadded(8), Display.count(run.failed).leftPadded(8),
                run.exitCode.map(String.init).map { $0.leftPadded(5) } ?? "    -",
            ].joined(separator: " ") + (run.mode == .backfill ? backfill : "")
        }

        func run() async throws {
            try await storeOptions.withStore(try await storeOptions.settings()) { (store: any SubscriptionTrail, database) in
                let runs = try await store.runs(last: max(1, last))
                switch format {
                case .json:
                    let rows: [[String: Any]] = runs.map { run in
                        var o: [String: Any] = [
                            "id": run.id, "mode": run.mode.rawValue, "status": run.status.rawValue, "started_at": Display.time(run.startedAtMs),
                            "run_clock": Display.time(run.nowMs), "host": run.host, "pid": run.pid, "options": run.options, "checkpoint_id": run.checkpointID,
                        ]
                        if let finished = run.finishedAtMs { o["finished_at"] = Display.time(finished) }
                        if let worker = run.worker { o["worker"] = worker }
                        if let workID = run.workID { o["work_id"] = workID }
                        if let report = run.report, let object = try? JSONSerialization.jsonObject(with: Data(report.utf8)) { o["report"] = object }
                        return o
                    }
                    print(String(decoding: try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys]), as: UTF8.self))
                case .text:
                    guard !runs.isEmpty else { return print("no runs yet in \(database)") }
                    print("   id  mode      status       started (UTC)          took     selected verified  updated   failed  exit")
                    // Runs of several workers (PostgreSQL) are grouped by the night or backfill they
                    // shared, newest first, under a line naming it.
                    var shown: Set<Int64> = []
                    for run in runs where !shown.contains(run.id) {
                        guard let workID = run.workID else {
                            print(Self.line(run))
                            continue
                        }
                        let group = runs.filter { $0.workID == workID }
                        shown.formUnion(group.map(\.id))
                        let opener = group.first { $0.id == workID }
                        let verified = group.compactMap(\.verified).reduce(0, +)
                        print("  \(run.mode == .backfill ? "backfill" : "night") \(workID)\(opener.map { " (clock \(Display.time($0.nowMs)), \(Display.count($0.targets)) rows)" } ?? ""): "
                            + "\(group.count) run\(group.count == 1 ? "" : "s") of \(Set(group.compactMap(\.worker)).count) worker(s) shown, \(Display.count(verified)) verified")
                        for member in group { print(Self.line(member) + "  worker \(member.worker ?? "-")") }
                    }
                }
            }
        }
    }
}
