import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Monthly subscriptions with a 12-month commitment (App Store Server API 1.21, Notifications 2.21,
/// April 2026): `billingPlanType` and `commitmentInfo` on the transaction, `renewalBillingPlanType`
/// and `commitmentInfo` on the renewal info — decoded from Apple's own model files, and through the
/// verifier from a signed renewal.
@Suite struct CommitmentFieldsDecodingTests {
    typealias Apple = AppleConformance

    @Test func appleTransactionModelDecodes() throws {
        let transaction = try JSONDecoder().decode(JWSTransactionPayload.self, from: try Apple.data("models/signedTransaction.json"))
        #expect(transaction.billingPlanType == "MONTHLY")
        #expect(transaction.commitmentInfo == TransactionCommitmentInfo(
            billingPeriodNumber: 3, commitmentExpiresDate: 1_698_150_000_000, commitmentPrice: 119_880, totalBillingPeriods: 12))
        // The fields read before, from the same file.
        #expect(transaction.transactionId == "23456" && transaction.originalTransactionId == "12345")
        #expect(transaction.bundleId == "com.example" && transaction.productId == "com.example.product")
        #expect(transaction.purchaseDate == 1_698_148_900_000 && transaction.expiresDate == 1_698_149_000_000)
        #expect(transaction.revocationDate == 1_698_148_950_000 && transaction.revocationReason == 1 && transaction.isUpgraded == true)
        #expect(transaction.type == "Auto-Renewable Subscription" && transaction.environment == "LocalTesting")
        #expect(transaction.signedDate == 1_698_148_900_000 && transaction.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(transaction.inAppOwnershipType == "PURCHASED" && transaction.transactionReason == "PURCHASE")
    }

    @Test func appleRenewalInfoModelDecodes() throws {
        let renewal = try JSONDecoder().decode(JWSRenewalInfoPayload.self, from: try Apple.data("models/signedRenewalInfo.json"))
        #expect(renewal.renewalBillingPlanType == "MONTHLY")
        #expect(renewal.commitmentInfo == RenewalCommitmentInfo(
            commitmentAutoRenewProductId: "com.example.product.commitment", commitmentAutoRenewStatus: 1, commitmentRenewalBillingPlanType: "MONTHLY",
            commitmentRenewalDate: 1_698_149_500_000, commitmentRenewalPrice: 9990))
        #expect(renewal.originalTransactionId == "12345" && renewal.productId == "com.example.product")
        #expect(renewal.autoRenewProductId == "com.example.product.2" && renewal.autoRenewStatus == 1 && renewal.expirationIntent == 1)
        #expect(renewal.isInBillingRetryPeriod == true && renewal.gracePeriodExpiresDate == 1_698_148_900_000)
        #expect(renewal.environment == "LocalTesting" && renewal.signedDate == 1_698_148_800_000)
    }

    /// A payload of before April 2026, or of a plan without commitment, has none of them.
    @Test func olderModelsHaveNone() throws {
        let transaction = try JSONDecoder().decode(JWSTransactionPayload.self, from: try Apple.data("models/signedTransactionWithRevocation.json"))
        #expect(transaction.billingPlanType == nil && transaction.commitmentInfo == nil)
        #expect(transaction.revocationReason == 1 && transaction.revocationDate == 1_698_148_950_000)
    }

    /// The minted DID_RENEW: a monthly plan in the fifth of its twelve billing periods, renewing after
    /// its commitment into a yearly plan billed up front.
    @Test func aSignedRenewalCarriesItsCommitmentThroughTheVerifier() async throws {
        let notification = try await Apple.verify("DID_RENEW").get()
        let firstPurchase: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z
        #expect(notification.transaction?.billingPlanType == "MONTHLY")
        #expect(notification.transaction?.commitmentInfo == TransactionCommitmentInfo(
            billingPeriodNumber: 5, commitmentExpiresDate: firstPurchase + 365 * 86_400_000, commitmentPrice: 119_880, totalBillingPeriods: 12))
        #expect(notification.renewal?.renewalBillingPlanType == "MONTHLY")
        #expect(notification.renewal?.commitmentInfo == RenewalCommitmentInfo(
            commitmentAutoRenewProductId: "com.example.premium.yearly", commitmentAutoRenewStatus: 1, commitmentRenewalBillingPlanType: "BILLED_UPFRONT",
            commitmentRenewalDate: firstPurchase + 365 * 86_400_000, commitmentRenewalPrice: 99_990))
        // Every other notification of the corpus is of a plan without commitment.
        let other = try await Apple.verify("DID_RENEW-BILLING_RECOVERY").get()
        #expect(other.transaction?.billingPlanType == nil && other.transaction?.commitmentInfo == nil)
        #expect(other.renewal?.renewalBillingPlanType == nil && other.renewal?.commitmentInfo == nil)
    }
}
