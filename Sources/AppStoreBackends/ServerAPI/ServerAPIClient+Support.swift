import EntitlementCore
import Foundation
import Logging
import NIOCore

extension ServerAPIClient {
    /// Look Up Order ID (`GET /inApps/v1/lookup/{orderId}`): the order's transactions, each
    /// verified as every signed answer is; production first, the sandbox when production says the
    /// id is invalid (status 1). Empty when neither environment knows the order for this app.
    public func lookUpOrder(_ orderID: String, logger: Logger) async throws -> [VerifiedTransaction] {
        for environment in [AppStoreEnvironment.production, .sandbox] {
            let body = try await exchange(path: "/inApps/v1/lookup/\(Self.pathComponent(orderID))", in: environment, json: nil, what: "order lookup", logger: logger)
            let answer = try decode(OrderLookupResponse.self, body!, environment: environment, what: "order lookup")
            guard answer.status == 0 else { continue }
            return try await verified(answer.signedTransactions ?? [], in: environment)
        }
        return []
    }

    /// Get Transaction Info (`GET /inApps/v1/transactions/{transactionId}`), verified; production
    /// first, the sandbox on 4040010. Nil when neither environment knows the id.
    public func transactionInfo(_ transactionID: String, logger: Logger) async throws -> VerifiedTransaction? {
        for environment in [AppStoreEnvironment.production, .sandbox] {
            guard let body = try await exchange(
                path: "/inApps/v1/transactions/\(Self.pathComponent(transactionID))", in: environment, json: nil, what: "transaction info",
                notFoundCode: ServerAPIErrorCode.transactionIdNotFound.rawValue, logger: logger)
            else { continue }
            let answer = try decode(TransactionInfoResponse.self, body, environment: environment, what: "transaction info")
            return try await verified([answer.signedTransactionInfo], in: environment)[0]
        }
        return nil
    }

    /// Get Refund History v2 (`GET /inApps/v2/refund/lookup/{transactionId}`, paged by `revision`
    /// while `hasMore`): every refunded transaction of the customer who owns `transactionID`,
    /// verified, oldest refund first. `environment` nil asks production, then the sandbox on
    /// 4040010; nil when neither knows the id.
    public func refundHistory(_ transactionID: String, in environment: AppStoreEnvironment? = nil, logger: Logger) async throws -> [VerifiedTransaction]? {
        for environment in environment.map({ [$0] }) ?? [.production, .sandbox] {
            var refunds: [VerifiedTransaction] = []
            var revision: String?
            var found = true
            repeat {
                var path = "/inApps/v2/refund/lookup/\(Self.pathComponent(transactionID))"
                if let revision { path += "?revision=\(Self.queryValue(revision))" }
                guard let body = try await exchange(
                    path: path, in: environment, json: nil, what: "refund history", notFoundCode: ServerAPIErrorCode.transactionIdNotFound.rawValue, logger: logger)
                else {
                    found = false
                    break
                }
                let page = try decode(RefundHistoryResponse.self, body, environment: environment, what: "refund history")
                refunds += try await verified(page.signedTransactions, in: environment)
                guard page.hasMore, let next = page.revision, next != revision else { break }
                revision = next
            } while true
            if found { return refunds }
        }
        return nil
    }

    /// Verifies each signed transaction for `environment`; any that fails throws ``VerificationFailure``.
    func verified(_ signed: [String], in environment: AppStoreEnvironment) async throws(VerificationFailure) -> [VerifiedTransaction] {
        var transactions: [VerifiedTransaction] = []
        for jws in signed {
            do {
                transactions.append(VerifiedTransaction(try await verifier.verifyTransaction(jws, environment: environment), environment: environment))
            } catch {
                throw VerificationFailure.signedData(error)
            }
        }
        return transactions
    }
}
