import EntitlementCore
import Logging

/// `--backend auto`: the App Store Server API where it can answer, verifyReceipt otherwise. A row
/// goes to the Server API when it has credentials; a row whose receipt cannot be read for its
/// transaction ids (`receipt_unreadable`), or every row when the Server API is not configured,
/// goes to verifyReceipt. Each answer still names its backend in the audit trail.
public struct AutoStatusSource: SubscriptionStatusSource {
    public let serverAPI: (any SubscriptionStatusSource)?
    public let verifyReceipt: (any SubscriptionStatusSource)?

    public init(serverAPI: (any SubscriptionStatusSource)?, verifyReceipt: (any SubscriptionStatusSource)?) {
        precondition(serverAPI != nil || verifyReceipt != nil, "auto needs at least one backend")
        self.serverAPI = serverAPI
        self.verifyReceipt = verifyReceipt
    }

    public func status(of row: SubscriptionRow, logger: Logger) async throws -> StatusLookup {
        guard let serverAPI else { return try await verifyReceipt!.status(of: row, logger: logger) }
        let lookup = try await serverAPI.status(of: row, logger: logger)
        guard case .failed(let failure) = lookup.result, failure.reason == .receiptUnreadable, let verifyReceipt else { return lookup }
        var fallback = try await verifyReceipt.status(of: row, logger: logger)
        fallback.stats.requests += lookup.stats.requests
        return fallback
    }
}
