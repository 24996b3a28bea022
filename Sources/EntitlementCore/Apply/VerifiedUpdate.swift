/// A successful verification, ready to be written.
public struct VerifiedUpdate: Sendable, Equatable {
    public var subscriptionID: Int64
    /// Who brought the answer, for the audit trail.
    public var provenance: Provenance
    /// The run that brought the answer, if a run did.
    public var runID: Int64? { provenance.runID }
    /// The receipt that was sent: the write is skipped when the web service replaced it meanwhile.
    /// Nil for data no receipt was sent for (a notification): it applies whatever the row holds,
    /// and leaves a receipt the web service uploaded due for the next poll.
    public var receiptSent: String?
    public var state: SubscriptionState
    /// For a row that owned no chain: the receipt's other chains, in order of preference. The
    /// store adopts the first of `state` and these that no other row owns, and enrols the other
    /// unowned ones as rows of the same user, so no subscription of the receipt is lost.
    public var otherChains: [SubscriptionState]
    /// Apple's `latest_receipt`, stored in place of the one sent; nil keeps the one sent.
    public var latestReceipt: String?
    /// The backend's status of the answer, for the bookkeeping and the audit trail.
    public var upstreamStatus: UpstreamStatus
    public var verifiedAtMs: Int64
    /// When Apple's data in `state` was true: a signed payload's `signedDate`, or when Apple was
    /// asked. A row holding data from later is not overwritten (newer Apple data wins).
    public var appleStateAtMs: Int64
    /// What the answer knows of the chain beyond `state`, for merging it with what the row holds.
    public var evidence: ChainEvidence
    /// Every transaction of the answer: the ledger keeps those of the chains the row owns or enrols.
    public var transactions: [SubscriptionTransaction]
    /// Who brought them, for the ledger's `first_source`.
    public var ledgerSource: LedgerSource

    /// `provenance` defaults to a poll by `runID`; `appleStateAtMs` to `verifiedAtMs`; `ledgerSource` to the provenance's.
    public init(
        subscriptionID: Int64, runID: Int64? = nil, provenance: Provenance? = nil, receiptSent: String?, state: SubscriptionState,
        otherChains: [SubscriptionState] = [], latestReceipt: String?, upstreamStatus: UpstreamStatus, verifiedAtMs: Int64, appleStateAtMs: Int64? = nil,
        evidence: ChainEvidence = ChainEvidence(), transactions: [SubscriptionTransaction] = [], ledgerSource: LedgerSource? = nil
    ) {
        self.subscriptionID = subscriptionID
        self.provenance = provenance ?? .poll(runID: runID)
        self.appleStateAtMs = appleStateAtMs ?? verifiedAtMs
        self.receiptSent = receiptSent
        self.state = state
        self.otherChains = otherChains
        self.latestReceipt = latestReceipt
        self.upstreamStatus = upstreamStatus
        self.verifiedAtMs = verifiedAtMs
        self.evidence = evidence
        self.transactions = transactions
        self.ledgerSource = ledgerSource ?? LedgerSource(self.provenance)
    }
}
