/// Which chain a row that owns none takes, once it is known who owns each candidate (the decision's
/// preferred chain, then its other chains in order): the first one no other row owns; the other
/// unowned ones are enrolled as rows of the same user. The store decides with it inside its write
/// transaction, a dry run with what it reads.
public enum ChainAdoption: Sendable, Equatable {
    /// Take `chain`; `discovered` are the receipt's other unowned chains, in order of preference.
    case adopt(SubscriptionState, discovered: [SubscriptionState])
    /// Every candidate belongs to another row; `owner` holds the preferred one.
    case conflict(owner: Int64)

    /// `ownerOf` answers which other row owns an `original_transaction_id` (nil: none).
    public init(candidates: [SubscriptionState], ownerOf: (String) throws -> Int64?) rethrows {
        var unowned: [SubscriptionState] = []
        var firstOwner: Int64?
        for candidate in candidates {
            guard let otid = candidate.originalTransactionID else { continue }
            if let holder = try ownerOf(otid) {
                if firstOwner == nil { firstOwner = holder }
            } else {
                unowned.append(candidate)
            }
        }
        if let adopted = unowned.first {
            self = .adopt(adopted, discovered: Array(unowned.dropFirst()))
        } else {
            self = .conflict(owner: firstOwner ?? 0)
        }
    }
}
