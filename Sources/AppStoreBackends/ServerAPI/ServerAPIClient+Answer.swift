import EntitlementCore
import Foundation
import Logging

extension ServerAPIClient {
    /// Asks Get All Subscription Statuses about `ids` (one call usually covers every chain of the
    /// customer; an id the answer lacks is asked too), production first and the sandbox on 4040010
    /// (or the other way round for a row known to be a sandbox one), then verifies every signed
    /// payload and maps the lot. Any payload that fails verification fails the whole row.
    func statuses(
        ids: [String], startingIn start: AppStoreEnvironment, stats: inout StatusLookup.Stats, subscriptionID: Int64, logger: Logger
    ) async throws -> StatusAnswer {
        var environment = start
        var switched = false
        var chains: [StatusResponse.LastTransaction] = []
        var pending = ids
        while let id = pending.first {
            let path = "/inApps/v1/subscriptions/\(Self.pathComponent(id))"
            guard let response = try await fetch(StatusResponse.self, path: path, from: environment, stats: &stats, subscriptionID: subscriptionID, logger: logger) else {
                // 4040010: the first id decides the environment; an id unknown in both fails.
                if chains.isEmpty, !switched {
                    switched = true
                    environment = environment == .production ? .sandbox : .production
                    continue
                }
                if chains.isEmpty {
                    throw VerificationFailure(.appleStatus, "transaction id \(id) is in neither environment (4040010)", upstreamStatus: .serverAPI(ServerAPIErrorCode.transactionIdNotFound.rawValue), httpStatus: 404)
                }
                pending.removeFirst()
                continue
            }
            if let expected = configuration.appAppleID, let answered = response.appAppleId, answered != expected {
                throw VerificationFailure(.bundleMismatch, "the answer is for appAppleId \(answered), expected \(expected)")
            }
            chains += response.data.flatMap(\.lastTransactions)
            let covered = Set(chains.compactMap(\.originalTransactionId))
            pending = pending.filter { !covered.contains($0) && $0 != id }
        }
        var transactions: [SubscriptionTransaction] = []
        var renewals: [SubscriptionRenewalInfo] = []
        var missing: [MissingRenewalInfo] = []
        for chain in chains {
            let (transaction, renewal) = try await verifiedEntry(chain, environment: environment)
            if configuration.readHistory, let id = transaction.originalTransactionId {
                transactions += try await history(of: id, environment: environment, stats: &stats, subscriptionID: subscriptionID, logger: logger)
            } else {
                transactions.append(Self.transaction(transaction))
            }
            if let renewal {
                renewals.append(Self.renewal(renewal))
            } else {
                let status = chain.status.flatMap(AppleSubscriptionStatus.init(rawValue:))
                missing.append(MissingRenewalInfo(originalTransactionID: transaction.originalTransactionId, appleStatus: status))
                logger.notice("Apple answered a chain without renewal info; its status sets billing retry and grace, the row keeps its other renewal columns", metadata: [
                    "subscription_id": "\(subscriptionID)", "original_transaction_id": "\(transaction.originalTransactionId ?? "-")",
                    "renewal_info": "\(chain.signedRenewalInfo == nil ? "absent" : "signed as null or {}")", "apple_status": "\(chain.status.map(String.init) ?? "-")",
                ])
            }
        }
        return StatusAnswer(
            upstreamStatus: .serverAPI(200), bundleID: configuration.credentials.bundleID, environment: environment.rawValue,
            transactions: transactions, renewals: renewals, latestReceipt: nil, missingRenewals: missing)
    }

    /// One `lastTransactions` entry, verified: its transaction, then its renewal info against it.
    func verifiedEntry(_ chain: StatusResponse.LastTransaction, environment: AppStoreEnvironment) async throws(VerificationFailure) -> (JWSTransactionPayload, JWSRenewalInfoPayload?) {
        do throws(SignedDataFailure) {
            guard let signed = chain.signedTransactionInfo else { throw SignedDataFailure(.malformed, "a lastTransactions entry has no signedTransactionInfo") }
            let transaction = try await verifier.verifyTransaction(signed, environment: environment)
            guard transaction.originalTransactionId == chain.originalTransactionId else {
                throw SignedDataFailure(.renewalMismatch, "the signed transaction is for chain \(transaction.originalTransactionId ?? "(none)"), listed under \(chain.originalTransactionId ?? "(none)")")
            }
            var renewal: JWSRenewalInfoPayload?
            if let signed = chain.signedRenewalInfo { renewal = try await verifier.verifyRenewalInfo(signed, of: transaction) }
            return (transaction, renewal)
        } catch {
            throw VerificationFailure.signedData(error)
        }
    }

    /// Every transaction of a chain, page by page (Get Transaction History v2), each verified.
    func history(of id: String, environment: AppStoreEnvironment, stats: inout StatusLookup.Stats, subscriptionID: Int64, logger: Logger) async throws -> [SubscriptionTransaction] {
        var transactions: [SubscriptionTransaction] = []
        var revision: String?
        repeat {
            var path = "/inApps/v2/history/\(Self.pathComponent(id))?sort=ASCENDING"
            if let revision { path += "&revision=\(Self.pathComponent(revision))" }
            guard let page = try await fetch(HistoryResponse.self, path: path, from: environment, stats: &stats, subscriptionID: subscriptionID, logger: logger) else {
                throw VerificationFailure(.appleStatus, "transaction history of \(id) not found (4040010)", upstreamStatus: .serverAPI(ServerAPIErrorCode.transactionIdNotFound.rawValue), httpStatus: 404)
            }
            for signed in page.signedTransactions {
                do {
                    transactions.append(Self.transaction(try await verifier.verifyTransaction(signed, environment: environment)))
                } catch {
                    throw VerificationFailure.signedData(error)
                }
            }
            guard page.hasMore, let next = page.revision, next != revision else { break }
            revision = next
        } while true
        return transactions
    }

    static func transaction(_ payload: JWSTransactionPayload) -> SubscriptionTransaction {
        SubscriptionTransaction(
            productID: payload.productId, transactionID: payload.transactionId, originalTransactionID: payload.originalTransactionId,
            purchaseDateMs: payload.purchaseDate, expiresDateMs: payload.expiresDate, revocationDateMs: payload.revocationDate,
            isUpgraded: payload.isUpgraded ?? false, ownershipType: payload.inAppOwnershipType,
            commitment: payload.billingPlanType.map {
                TransactionCommitment(
                    billingPlanType: $0, billingPeriod: payload.commitmentInfo?.billingPeriodNumber,
                    billingPeriods: payload.commitmentInfo?.totalBillingPeriods, expiresAtMs: payload.commitmentInfo?.commitmentExpiresDate)
            },
            facts: TransactionFacts(
                signedAtMs: payload.signedDate, environment: payload.environment, price: payload.price, currency: payload.currency,
                storefront: payload.storefront, storefrontID: payload.storefrontId, transactionReason: payload.transactionReason,
                offerType: payload.offerType, offerIdentifier: payload.offerIdentifier, offerDiscountType: payload.offerDiscountType,
                offerPeriod: payload.offerPeriod, revocationReason: payload.revocationReason, revocationType: payload.revocationType,
                revocationPercentage: payload.revocationPercentage, webOrderLineItemID: payload.webOrderLineItemId))
    }

    static func renewal(_ payload: JWSRenewalInfoPayload) -> SubscriptionRenewalInfo {
        SubscriptionRenewalInfo(
            originalTransactionID: payload.originalTransactionId, productID: payload.productId, autoRenewProductID: payload.autoRenewProductId,
            autoRenewStatus: payload.autoRenewStatus.map { $0 == 1 }, expirationIntent: payload.expirationIntent,
            isInBillingRetryPeriod: payload.isInBillingRetryPeriod, gracePeriodExpiresDateMs: payload.gracePeriodExpiresDate,
            renewalBillingPlanType: payload.renewalBillingPlanType)
    }

    /// Ids and revisions go into the path: anything but [A-Za-z0-9-_.] is percent-encoded.
    static func pathComponent(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_."))) ?? ""
    }
}
