import EntitlementCore
import Foundation
import Logging

extension ServerAPIClient {
    /// Send Consumption Information (`PUT /inApps/v2/transactions/consumption/{transactionId}`,
    /// App Store Server API 1.19) to `environment`: one request, in the shared rate, classified
    /// for the sender, which keeps the retries in the database (so they outlive the process and
    /// stop at the deadline). A 401 throws ``RunAbort`` (the credentials are wrong for every request).
    public func sendConsumptionInformation(transactionID: String, body: String, in environment: AppStoreEnvironment, logger: Logger) async throws -> ConsumptionSendOutcome {
        let exchange = try await send(
            path: "/inApps/v2/transactions/consumption/\(Self.pathComponent(transactionID))", to: environment, json: Array(body.utf8), put: true)
        switch exchange {
        case .ok(_, let httpStatus):
            return .accepted(httpStatus: httpStatus)
        case .unauthorized:
            throw RunAbort.serverAPIUnauthorized(environment)
        case .apple(let code, let httpStatus, let retryAfter):
            if httpStatus == 429 || code == ServerAPIErrorCode.rateLimitExceeded.rawValue {
                rateLimited(in: environment, retryAfter: retryAfter, logger: logger)
                return .retry(httpStatus: httpStatus, appleError: code, retryAfter: retryAfter)
            }
            switch ServerAPIErrorCode(rawValue: code)?.handling {
            case .refusesApp?: throw RunAbort.serverAPIRefusesApp(code, configuration.credentials.bundleID)
            case .retry?, .retryLater?: return .retry(httpStatus: httpStatus, appleError: code, retryAfter: retryAfter)
            case .otherEnvironment?, nil:
                return httpStatus >= 500 ? .retry(httpStatus: httpStatus, appleError: code, retryAfter: retryAfter) : .refused(httpStatus: httpStatus, appleError: code)
            }
        case .transient(let failure, let retryAfter):
            if failure.httpStatus == 429 { rateLimited(in: environment, retryAfter: retryAfter, logger: logger) }
            return .retry(httpStatus: failure.httpStatus, appleError: nil, retryAfter: retryAfter)
        case .permanent(let failure):
            return .refused(httpStatus: failure.httpStatus, appleError: nil)
        }
    }
}
