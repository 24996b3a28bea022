extension SimulatedChain {
    /// The share of planned refunds that a `DECLINE` preference, answered before Apple decides,
    /// turns into a decline (seeded per transaction).
    public static let declineWeight = 0.5

    /// Lets an answer to the refund request of `transactionID`, taken at `ms`, weigh on Apple's
    /// seeded decision: before the decision, a `DECLINE` preference turns a planned refund into a
    /// decline at the same instant for ``declineWeight`` of the transactions (the `REFUND`, its
    /// reversal and the revocation never happen; `REFUND_DECLINED` comes instead). A grant
    /// preference changes nothing: this simulator's declined requests are of the running period,
    /// whose refund mid-chain it does not model. Returns Apple's decision before and after the
    /// answer ("refunded" or "declined"; nil without a request asked by then).
    mutating func weighConsumptionAnswer(transactionID: String, refundPreference: String?, at ms: Int64, seed: UInt64) -> (planned: String?, decided: String?) {
        guard let index = transactions.firstIndex(where: { $0.transactionID == transactionID }) else { return (nil, nil) }
        var t = transactions[index]
        guard let asked = t.refundRequestedAtMs, asked <= ms else { return (nil, nil) }
        if t.refundDeclinedAtMs != nil { return ("declined", "declined") }
        guard let refunded = t.refundedAtMs else { return (nil, nil) }
        var draw = SeededRandom(seed: seed ^ 0x0C0A_5E39, stableHash(transactionID))
        guard refunded > ms, refundPreference == "DECLINE", draw.chance(Self.declineWeight) else { return ("refunded", "refunded") }
        t.refundDeclinedAtMs = refunded
        t.refundedAtMs = nil
        t.refundReversedAtMs = nil
        t.refundReason = 0
        transactions[index] = t
        return ("refunded", "declined")
    }
}
