@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

extension SubscriptionState {
    /// This state holding the chain's effective transaction an answer names: its id, its purchase
    /// date, and its ownership (`AppleJSON.Transaction` sends "PURCHASED"; the Server API's test
    /// transactions carry none).
    func holding(_ transactionID: String, purchasedAt: Int64, ownership: String? = "PURCHASED") -> SubscriptionState {
        var state = self
        state.transactionID = transactionID
        state.purchasedAt = purchasedAt
        state.ownershipType = ownership
        return state
    }
}
