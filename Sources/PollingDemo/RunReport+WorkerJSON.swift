import EntitlementCore
import Foundation
import StatusPolling

extension RunReport {
    /// A report read back from the JSON that `run --report json` printed (``RunReport/json()``): the
    /// demo's worker processes hand their reports over this way. Keys it does not know are left
    /// at their defaults; a body that is not a report throws.
    public init(workerJSON data: Data) throws {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let nowMs = (object["now_ms"] as? NSNumber)?.int64Value
        else { throw CocoaError(.propertyListReadCorrupt) }
        self.init(nowMs: nowMs, dryRun: object["dry_run"] as? Bool ?? false)
        func int(_ key: String) -> Int { (object[key] as? NSNumber)?.intValue ?? 0 }
        func counts(_ key: String) -> [String: Int] {
            ((object[key] as? [String: Any]) ?? [:]).compactMapValues { ($0 as? NSNumber)?.intValue }
        }
        selected = int("selected")
        selectedLapsed = int("selected_lapsed")
        skippedFresh = int("skipped_fresh")
        verified = int("verified")
        updated = int("updated")
        unchanged = int("unchanged")
        discovered = int("discovered")
        superseded = int("superseded")
        requests = int("requests")
        retries = int("retries")
        throttled = int("throttled")
        lowestConcurrency = int("lowest_concurrency")
        abandoned = int("abandoned")
        checkpoint = (object["checkpoint"] as? NSNumber)?.int64Value ?? 0
        durationSeconds = (object["duration_seconds"] as? NSNumber)?.doubleValue ?? 0
        aborted = object["aborted"] as? String
        interrupted = object["interrupted"] as? Bool ?? false
        deadlineReached = object["deadline_reached"] as? Bool ?? false
        for (key, count) in counts("failed_by_reason") {
            if let reason = VerificationFailure.Reason(rawValue: key) { failedByReason[reason, default: 0] += count }
        }
        for (key, count) in counts("transitions") {
            if let transition = SubscriptionTransition(rawValue: key) { transitions[transition, default: 0] += count }
        }
        // "verifyReceipt 21003": the backend, a space, the code.
        for (key, count) in counts("failed_by_upstream_status") {
            let parts = key.split(separator: " ")
            if parts.count == 2, let code = Int(parts[1]) {
                failedByUpstreamStatus[UpstreamStatus(backend: StatusBackend(rawValue: String(parts[0])), code: code), default: 0] += count
            }
        }
    }
}
