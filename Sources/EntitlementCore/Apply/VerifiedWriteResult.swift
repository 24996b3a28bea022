/// What writing a successful verification did.
public enum VerifiedWriteResult: Sendable, Equatable {
    /// The contract columns were written; `previous` is what they held inside the transaction.
    /// `adopted` is set when the preferred chain was owned by another row and the next one was
    /// adopted instead; `discovered` counts the receipt's other unowned chains enrolled as rows.
    case written(previous: SubscriptionState, adopted: SubscriptionState? = nil, discovered: Int = 0)
    /// The chain belongs to row `owner`: nothing was granted, the conflict is in the bookkeeping.
    case conflict(owner: Int64)
    /// The web service replaced `latest_receipt` while Apple was being asked: the answer is for an
    /// older receipt, so nothing was written; the next run verifies the new one.
    case superseded
    /// The row already holds Apple data newer than the answer's (written by another writer
    /// meanwhile): nothing was changed, a `stale` audit row says so.
    case stale
    /// The row was deleted meanwhile.
    case missing
}
