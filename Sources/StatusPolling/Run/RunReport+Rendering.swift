import EntitlementCore
import Foundation

extension RunReport {
    /// Exactly one JSON document, keys sorted, for `--report json`.
    public func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// A short table for people, for `--report text`.
    public func text() -> String {
        var lines: [String] = []
        let clock = RFC3339Timestamp.text(nowMs, fractionalSeconds: false)
        lines.append("status-poller run at \(clock)\(dryRun ? " (dry run: nothing written)" : "")")
        if let catchUp {
            lines.append(Self.row("catch-up", catchUp.line.isEmpty ? "nothing read" : catchUp.line))
            if catchUp.massExtensionsChecked > 0 || catchUp.massExtensionsFailure != nil {
                lines.append(Self.row("extensions", catchUp.massExtensionsFailure.map { "FAILED (\($0))" }
                    ?? "\(catchUp.massExtensionsChecked) mass extension\(catchUp.massExtensionsChecked == 1 ? "" : "s") asked after, \(catchUp.massExtensionsCompleted) complete"))
            }
        }
        lines.append(Self.row("selected", "\(selected)" + (selectedLapsed > 0 ? "  (\(selectedLapsed) lapsed, on their turn in the sweep)" : "")))
        if skippedFresh > 0 { lines.append(Self.row("skipped (fresh)", "\(skippedFresh)  (Apple's data recorded recently, by notification or run)")) }
        lines.append(Self.row("verified", "\(verified)  (updated \(updated), unchanged \(unchanged))"))
        if discovered > 0 { lines.append(Self.row("discovered", "\(discovered)  (other subscriptions in new receipts, enrolled as rows of the same user)")) }
        if superseded > 0 { lines.append(Self.row("superseded", "\(superseded)  (receipt replaced during the run; next run verifies it)")) }
        var failedLine = "\(failed)"
        if failed > 0 {
            let reasons = failedByReason.sorted { $0.key < $1.key }.map { "\($0.key.rawValue) \($0.value)" }
            failedLine += "  (" + reasons.joined(separator: ", ")
            if !failedByUpstreamStatus.isEmpty {
                failedLine += "; Apple status " + failedByUpstreamStatus.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            }
            failedLine += ") — their access is unchanged"
        }
        lines.append(Self.row("failed", failedLine))
        let changes = transitions.filter { $0.key != .unchanged }.sorted { $0.key < $1.key }
        if !changes.isEmpty {
            lines.append(Self.row("changes", changes.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")))
        }
        lines.append(Self.row("requests", "\(requests)  (retries \(retries))"))
        if throttled > 0 {
            lines.append(Self.row("throttled", "\(throttled) answers failed in a way that may pass or asked to slow down; concurrency \(lowestConcurrency) at the lowest"))
        }
        if let pruned {
            let deleted = pruned.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            lines.append(Self.row("pruned", deleted.isEmpty ? "nothing old enough" : deleted.joined(separator: ", ")))
        }
        lines.append(Self.row("duration", String(format: "%.2f s", durationSeconds)))
        if let aborted { lines.append(Self.row("ABORTED", aborted)) }
        if interrupted { lines.append(Self.row("STOPPED", "\(deadlineReached ? "at the deadline" : "on request") after \(selected) rows\(abandoned > 0 ? ", \(abandoned) in flight abandoned" : ""); checkpoint \(checkpoint)")) }
        lines.append(Self.row("exit", "\(exitCode.rawValue) (\(exitCode.meaning))"))
        return lines.joined(separator: "\n")
    }

    private static func row(_ label: String, _ value: String) -> String {
        label.padding(toLength: 11, withPad: " ", startingAt: 0) + value
    }
}
