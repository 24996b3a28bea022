import AppStoreBackends
import EntitlementCore
import Logging

extension SupportDesk {
    /// What became of `extend --all`.
    public enum MassExtensionOutcome: Sendable, Equatable {
        /// Apple took the request (again, when an earlier attempt never heard Apple's answer).
        case taken(MassExtensionRequest)
        /// Apple had taken this request identifier before: nothing was sent.
        case alreadyTaken(MassExtensionRequest)
        /// Apple refused it.
        case refused(RenewalExtensionRefusal, MassExtensionRequest)
        /// The identifier is recorded with other terms (product, days, reason, storefronts).
        case conflicting(MassExtensionRequest)
    }

    /// Records `request` in the database before anything is sent, then asks Apple (Extend
    /// Subscription Renewal Dates for All Active Subscribers) unless Apple took this identifier
    /// already; Apple's answer is recorded. Run again with the same identifier after a crash, it
    /// sends the same request, which Apple takes once.
    public func requestMassExtension(_ request: MassExtensionRequest, client: ServerAPIClient, nowMs: Int64, logger: Logger) async throws -> MassExtensionOutcome {
        let stored = try await store.recordMassExtension(request)
        guard stored.productID == request.productID, stored.days == request.days, stored.reasonCode == request.reasonCode,
            stored.storefrontCountryCodes == request.storefrontCountryCodes, stored.environment == request.environment
        else { return .conflicting(stored) }
        if stored.acceptedAtMs != nil { return .alreadyTaken(stored) }
        let terms = RenewalExtensionRequest(
            days: request.days, reason: RenewalExtensionRequest.Reason(rawValue: request.reasonCode) ?? .undeclared, requestIdentifier: request.requestIdentifier)
        let environment = AppStoreEnvironment(rawValue: request.environment) ?? .production
        let refusal = try await client.extendRenewalDatesForAll(
            productID: request.productID, terms, storefrontCountryCodes: request.storefrontCountryCodes, in: environment, logger: logger)
        try await store.markMassExtension(request.requestIdentifier, acceptedAtMs: refusal == nil ? nowMs : nil, appleError: refusal?.rawValue)
        let updated = try await store.massExtensions().first { $0.requestIdentifier == request.requestIdentifier } ?? stored
        return refusal.map { .refused($0, updated) } ?? .taken(updated)
    }

    /// Asks Apple's status (Get Status of Subscription Renewal Date Extensions) of every request
    /// Apple took and has not finished, records it, and returns every request as stored after.
    /// A request Apple no longer knows (4040009) is left as it was.
    public func followMassExtensions(client: ServerAPIClient, nowMs: Int64, logger: Logger) async throws -> [MassExtensionRequest] {
        for request in try await store.massExtensions() where request.isPending {
            let environment = AppStoreEnvironment(rawValue: request.environment) ?? .production
            guard let status = try await client.massExtensionStatus(productID: request.productID, requestIdentifier: request.requestIdentifier, in: environment, logger: logger)
            else {
                logger.warning("Apple knows no such mass extension", metadata: ["request_identifier": "\(request.requestIdentifier)"])
                continue
            }
            try await store.recordMassExtensionStatus(status, checkedAtMs: nowMs)
        }
        return try await store.massExtensions()
    }
}
