/// Who brought a transaction to the ledger first (`subscription_transactions.first_source`): the
/// report and `refunds` say where a refund or a price was learnt.
public enum LedgerSource: String, Sendable, CaseIterable {
    /// A nightly run's answer.
    case poll
    /// A backfill run's answer (the transaction history when it is read).
    case backfill
    /// A notification Apple pushed to the receiver.
    case notification
    /// A notification read back from Apple's Notification History (the catch-up).
    case history
    /// `extend`: Apple's status asked right after it extended a renewal date.
    case extended

    /// The source an answer of `provenance` is: a notification's is `notification` until its
    /// receiver says it came from the history.
    public init(_ provenance: Provenance) {
        switch provenance {
        case .poll: self = .poll
        case .backfill: self = .backfill
        case .notification: self = .notification
        case .extended: self = .extended
        }
    }
}
