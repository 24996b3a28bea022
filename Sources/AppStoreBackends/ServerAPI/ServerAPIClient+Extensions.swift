import EntitlementCore
import Foundation
import Logging
import NIOCore

extension ServerAPIClient {
    /// Extend a Subscription Renewal Date (`PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`)
    /// in `environment`. Apple's refusals (its codes in ``RenewalExtensionRefusal``) come back as
    /// `.refused`; anything else that fails throws. Sending the same request identifier again is
    /// safe: Apple extends once.
    public func extendRenewalDate(
        originalTransactionID: String, _ request: RenewalExtensionRequest, in environment: AppStoreEnvironment, logger: Logger
    ) async throws -> RenewalExtensionOutcome {
        let body = try Self.body(ExtendRenewalDateRequest(extendByDays: request.days, extendReasonCode: request.reason.rawValue, requestIdentifier: request.requestIdentifier))
        do {
            let answer = try await exchange(
                path: "/inApps/v1/subscriptions/extend/\(Self.pathComponent(originalTransactionID))", in: environment, json: body, put: true,
                what: "renewal date extension", logger: logger)
            let response = try decode(ExtendRenewalDateResponse.self, answer!, environment: environment, what: "renewal date extension")
            guard response.success == true, let effective = response.effectiveDate else {
                throw VerificationFailure(.unexpectedResponse, "Apple answered the extension without success or effectiveDate", upstreamStatus: .serverAPI(200), httpStatus: 200)
            }
            return .extended(effectiveDateMs: effective, webOrderLineItemID: response.webOrderLineItemId, environment: environment)
        } catch let failure as VerificationFailure {
            guard let code = failure.upstreamStatus?.code, let refusal = RenewalExtensionRefusal(rawValue: code) else { throw failure }
            return .refused(refusal, environment: environment)
        }
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers (`POST /inApps/v1/subscriptions/extend/mass`):
    /// returns nil once Apple took the request (it works through it for hours), or its refusal.
    public func extendRenewalDatesForAll(
        productID: String, _ request: RenewalExtensionRequest, storefrontCountryCodes: [String]?, in environment: AppStoreEnvironment, logger: Logger
    ) async throws -> RenewalExtensionRefusal? {
        let body = try Self.body(ExtendRenewalDateRequest(
            extendByDays: request.days, extendReasonCode: request.reason.rawValue, requestIdentifier: request.requestIdentifier, productId: productID,
            storefrontCountryCodes: storefrontCountryCodes))
        do {
            let answer = try await exchange(path: "/inApps/v1/subscriptions/extend/mass", in: environment, json: body, what: "mass renewal date extension", logger: logger)
            _ = try decode(MassExtendRenewalDateResponse.self, answer!, environment: environment, what: "mass renewal date extension")
            return nil
        } catch let failure as VerificationFailure {
            guard let code = failure.upstreamStatus?.code, let refusal = RenewalExtensionRefusal(rawValue: code) else { throw failure }
            return refusal
        }
    }

    /// Get Status of Subscription Renewal Date Extensions (`GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`):
    /// nil when Apple knows no such request (4040009).
    public func massExtensionStatus(productID: String, requestIdentifier: String, in environment: AppStoreEnvironment, logger: Logger) async throws -> MassExtensionStatus? {
        let path = "/inApps/v1/subscriptions/extend/mass/\(Self.pathComponent(productID))/\(Self.pathComponent(requestIdentifier))"
        guard let answer = try await exchange(path: path, in: environment, json: nil, what: "mass extension status", notFoundCode: 4_040_009, logger: logger) else { return nil }
        let status = try decode(MassExtendRenewalDateStatusResponse.self, answer, environment: environment, what: "mass extension status")
        return MassExtensionStatus(
            requestIdentifier: status.requestIdentifier ?? requestIdentifier, complete: status.complete ?? false, completeDateMs: status.completeDate,
            succeeded: status.succeededCount, failed: status.failedCount)
    }

    static func body(_ request: ExtendRenewalDateRequest) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Array(try encoder.encode(request))
    }
}
