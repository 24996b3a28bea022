/// How much of a chain an answer speaks for, which decides what it may change on a row that
/// already holds the chain (``ChainMerge``).
public enum AnswerScope: Sendable, Equatable {
    /// The chain's latest transaction as Apple knew it when it answered: verifyReceipt's
    /// `latest_receipt_info`, Get All Subscription Statuses, a V1 notification's unified receipt.
    case latestTransaction
    /// One transaction of the chain, which may be an earlier period than the current one: a V2
    /// notification's `signedTransactionInfo` (a refund of last month comes this way).
    case oneTransaction
}
