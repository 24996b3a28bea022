import EntitlementCore

/// An audit event as `status-poller history` prints it.
extension SubscriptionEvent {
    /// "2026-11-20 03:00:05  renewed  entitled → entitled   subscription 7, run 4, Apple status verifyReceipt 0",
    /// then a line per column that changed; `names` are the notifications' types by id.
    package func lines(names: [String: String] = [:]) -> [String] {
        let status = appleStatus.map { "\(statusBackend.map { "\($0) " } ?? "")\($0)" } ?? "-"
        return ["\(Display.time(atMs))  \(reason.padded(22)) \(entitlementBefore) → \(entitlementAfter)   subscription \(subscriptionID), \(broughtBy(names: names)), Apple status \(status)"]
            + Self.changes(old, new).map { "      \($0)" }
    }

    /// Who brought the change: "run 4", "backfill run 9", "notification DID_RENEW 6f1c…".
    package func broughtBy(names: [String: String] = [:]) -> String {
        switch source {
        case "notification": return "notification \(notificationID.flatMap { names[$0] }.map { "\($0) " } ?? "")\(notificationID ?? "-")"
        case "backfill": return "backfill run \(runID.map(String.init) ?? "-")"
        default: return "run \(runID.map(String.init) ?? "-")"
        }
    }

    /// "column: old → new" for each contract column that changed; times shown as dates.
    package static func changes(_ old: SubscriptionState, _ new: SubscriptionState) -> [String] {
        old.changedColumns(comparedWith: new).map { column in
            "\(column.rawValue): \(column.value(in: old).text(time: Display.time)) → \(column.value(in: new).text(time: Display.time))"
        }
    }
}

extension ConsumptionRequestRecord {
    /// What was answered to a refund request: "sent 2026-11-20 10:00:01 (on time), preference DECLINE; Apple refunded".
    package var answerText: String {
        var text = "consumption information \(state.rawValue)"
        if let sent = sentAtMs { text += " \(Display.time(sent)) (\(answeredOnTime ? "on time" : "late"))" }
        if state == .pending { text += ", deadline \(Display.time(deadlineMs))" }
        if let error = appleError, state != .sent { text += ", Apple error \(error)" }
        if body != nil { text += ", preference \(refundPreference?.rawValue ?? "none")" }
        if let decision { text += "; Apple \(decision)" }
        return text
    }
}
