import Foundation

/// The run history as `status-poller runs` prints it: a table (the runs of several workers grouped
/// by the night or backfill they shared), or JSON.
extension RunRecord {
    /// The table's lines, newest first; `database` names the store when it holds no run.
    package static func table(_ runs: [RunRecord], database: String) -> [String] {
        guard !runs.isEmpty else { return ["no runs yet in \(database)"] }
        var lines = ["   id  mode      status       started (UTC)          took     selected verified  updated   failed  exit"]
        // Runs of several workers (PostgreSQL) are grouped by the night or backfill they shared,
        // newest first, under a line naming it.
        var shown: Set<Int64> = []
        for run in runs where !shown.contains(run.id) {
            guard let workID = run.workID else {
                lines.append(run.line)
                continue
            }
            let group = runs.filter { $0.workID == workID }
            shown.formUnion(group.map(\.id))
            let opener = group.first { $0.id == workID }
            let verified = group.compactMap(\.verified).reduce(0, +)
            lines.append("  \(run.mode == .backfill ? "backfill" : "night") \(workID)\(opener.map { " (clock \(Display.time($0.nowMs)), \(Display.count($0.targets)) rows)" } ?? ""): "
                + "\(group.count) run\(group.count == 1 ? "" : "s") of \(Set(group.compactMap(\.worker)).count) worker(s) shown, \(Display.count(verified)) verified")
            for member in group { lines.append(member.line + "  worker \(member.worker ?? "-")") }
        }
        return lines
    }

    /// One run as a row of the table.
    package var line: String {
        let took = finishedAtMs.map { Display.seconds(Double($0 - startedAtMs) / 1000) } ?? "-"
        let backfill = workID == nil ? "  targets \(Display.count(targets)), checkpoint \(checkpointID)" : ""
        return [
            String(id).leftPadded(5), mode.rawValue.padded(9), status.rawValue.padded(12),
            Display.time(startedAtMs).padded(22), took.leftPadded(6),
            Display.count(selected).leftPadded(11), Display.count(verified).leftPadded(8),
            Display.count(updated).leftPadded(8), Display.count(failed).leftPadded(8),
            exitCode.map(String.init).map { $0.leftPadded(5) } ?? "    -",
        ].joined(separator: " ") + (mode == .backfill ? backfill : "")
    }

    /// The runs as one JSON document, keys sorted; each run's report as the object it recorded.
    package static func json(_ runs: [RunRecord]) throws -> String {
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
        return String(decoding: try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys]), as: UTF8.self)
    }
}
