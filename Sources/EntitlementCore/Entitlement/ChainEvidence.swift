/// What an answer says about its chain beyond the effective transaction's columns: how much of
/// the chain it speaks for, the chain's other periods Apple revoked, and Apple's own verdict on
/// the subscription. ``ChainMerge`` combines it with what the row holds.
public struct ChainEvidence: Sendable, Equatable {
    public var scope: AnswerScope
    /// Periods other than the effective one that Apple refunded or revoked (not those upgraded
    /// away, which Apple also dates): the refunds of earlier periods an answer shows.
    public var revokedPeriods: [RevokedTransaction]
    /// For a one-transaction answer: that transaction was upgraded away, so it is not current.
    public var isUpgraded: Bool
    /// A V2 notification's `data.status` as of its `signedDate` (1 active, 2 expired, 3 billing
    /// retry, 4 grace period, 5 revoked): the check of what the row comes to.
    public var appleStatus: AppleSubscriptionStatus?

    public init(scope: AnswerScope = .latestTransaction, revokedPeriods: [RevokedTransaction] = [], isUpgraded: Bool = false, appleStatus: AppleSubscriptionStatus? = nil) {
        self.scope = scope
        self.revokedPeriods = revokedPeriods
        self.isUpgraded = isUpgraded
        self.appleStatus = appleStatus
    }
}
