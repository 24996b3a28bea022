/// Apple's `StatusResponse` (Get All Subscription Statuses): every subscription of the customer,
/// grouped by subscription group, each with its last transaction and renewal info, signed.
struct StatusResponse: Decodable {
    /// `data`: one entry per subscription group.
    struct SubscriptionGroup: Decodable {
        var subscriptionGroupIdentifier: String?
        var lastTransactions: [LastTransaction]
    }

    /// `lastTransactions` entry: one chain.
    struct LastTransaction: Decodable {
        /// 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
        var status: Int?
        var originalTransactionId: String?
        var signedTransactionInfo: String?
        var signedRenewalInfo: String?
    }

    var environment: String?
    var bundleId: String?
    var appAppleId: Int64?
    var data: [SubscriptionGroup]
}
