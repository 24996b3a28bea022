import EntitlementCore

/// A row as `show` and the support commands print it: the entitlement at an instant, every
/// contract column, and the bookkeeping.
package enum RowText {
    package static func lines(_ row: SubscriptionRow, _ bookkeeping: SubscriptionBookkeeping?, nowMs: Int64) -> [String] {
        let state = row.state
        let entitlement = state.entitlement(at: nowMs)
        var lines = ["subscription \(row.id)  user \(row.userID)  →  \(entitlement.rawValue), \(entitlement.isEntitled ? "ENTITLED" : "not entitled") at \(Display.time(nowMs))"]
        for column in ContractColumn.allCases {
            lines.append("  \(column.rawValue.padded(24)) \(column.value(in: state).text(time: Display.time, flag: { $0 ? "1" : "0" }))")
        }
        guard let bookkeeping else { return lines }
        lines.append("  last verified            \(Display.optionalTime(bookkeeping.lastVerifiedAt))")
        lines.append("  last attempt             \(Display.optionalTime(bookkeeping.lastAttemptAt))\(bookkeeping.lastErrorReason.map { "  failed: \($0) — \(bookkeeping.lastError ?? "")" } ?? "")")
        if bookkeeping.consecutiveFailures > 0 { lines.append("  consecutive failures     \(bookkeeping.consecutiveFailures)") }
        if row.receiptUploaded { lines.append("  a new receipt was uploaded; the next run verifies it") }
        return lines
    }
}
