import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The ledger's facts — price, currency, storefront, offer, Apple's signing — as each backend's
/// transaction carries them: every one Apple's model file holds, none guessed where verifyReceipt
/// has none, and a reshaped fact never costs the entitlement its answer.
@Suite struct LedgerFactsDecodingTests {
    typealias Apple = AppleConformance

    @Test func appleTransactionModelGivesEveryFact() throws {
        let payload = try JSONDecoder().decode(JWSTransactionPayload.self, from: try Apple.data("models/signedTransaction.json"))
        let transaction = ServerAPIClient.transaction(payload)
        #expect(transaction.facts == TransactionFacts(
            signedAtMs: 1_698_148_900_000, environment: "LocalTesting", price: 10_990, currency: "USD", storefront: "USA", storefrontID: "143441",
            transactionReason: "PURCHASE", offerType: 1, offerIdentifier: "abc.123", offerDiscountType: "PAY_AS_YOU_GO", offerPeriod: "P1Y",
            revocationReason: 1, webOrderLineItemID: "34343"))
        #expect(transaction.transactionID == "23456" && transaction.revocationDateMs == 1_698_148_950_000)
    }

    /// December 2025's refund fields, from a payload signed as Apple signs them.
    @Test func aProratedRefundKeepsItsTypeAndPercentage() async throws {
        let pki = try TestPKI()
        let verifier = SignedDataVerifier(trustedRoots: [pki.root], bundleID: SignedPayloads.bundle)
        let jws = pki.sign(SignedPayloads.transaction([
            "revocationDate": 1_789_500_000_000, "revocationReason": 0, "revocationType": "REFUND_PRORATED", "revocationPercentage": 41_500,
        ]))
        let facts = ServerAPIClient.transaction(try await verifier.verifyTransaction(jws, environment: .production)).facts
        #expect(facts.revocationType == "REFUND_PRORATED" && facts.revocationPercentage == 41_500 && facts.revocationReason == 0)
        #expect(facts.signedAtMs == SignedPayloads.signedDate && facts.environment == "Production")
        #expect(facts.price == nil && facts.currency == nil && facts.offerType == nil)
    }

    /// A fact of another type than Apple documents reads as unknown; the payload still verifies and
    /// every field the decision reads is there.
    @Test func aReshapedFactReadsAsUnknownAndThePayloadStillVerifies() async throws {
        let pki = try TestPKI()
        let verifier = SignedDataVerifier(trustedRoots: [pki.root], bundleID: SignedPayloads.bundle)
        let jws = pki.sign(SignedPayloads.transaction([
            "offerType": "introductory", "price": "9.99", "currency": "EUR", "storefront": ["code": "DEU"], "offerPeriod": 30,
            "offerIdentifier": "spring\u{0}sale",
        ]))
        let payload = try await verifier.verifyTransaction(jws, environment: .production)
        #expect(payload.offerType == nil && payload.price == nil && payload.storefront == nil && payload.offerPeriod == nil)
        #expect(payload.offerIdentifier == nil, "a NUL character no store keeps")
        #expect(payload.currency == "EUR")
        #expect(payload.transactionId == "1000000123" && payload.expiresDate == 1_791_600_000_000)
    }

    /// verifyReceipt names no price, currency or storefront; its offer keys give the offer types.
    @Test func verifyReceiptEntriesMapTheirOffersAndNeverAPrice() throws {
        func entry(_ keys: String) throws -> SubscriptionTransaction {
            let body = """
                {"status":0,"environment":"Production","receipt":{"bundle_id":"com.example"},"latest_receipt_info":[{"product_id":"p",\
                "transaction_id":"2","original_transaction_id":"1","purchase_date_ms":"1000","expires_date_ms":"2000",\
                "web_order_line_item_id":"77"\(keys)}]}
                """
            return try #require(try VerifyReceiptResponse(json: Data(body.utf8)).statusAnswer.transactions.first)
        }
        let trial = try entry(#","is_trial_period":"true","is_in_intro_offer_period":"false""#)
        #expect(trial.facts == TransactionFacts(environment: "Production", offerType: 1, offerDiscountType: "FREE_TRIAL", webOrderLineItemID: "77"))
        let intro = try entry(#","is_trial_period":"false","is_in_intro_offer_period":"true""#)
        #expect(intro.facts == TransactionFacts(environment: "Production", offerType: 1, webOrderLineItemID: "77"))
        let promotional = try entry(#","is_trial_period":"true","promotional_offer_id":"winter""#)
        #expect(promotional.facts == TransactionFacts(
            environment: "Production", offerType: 2, offerIdentifier: "winter", offerDiscountType: "FREE_TRIAL", webOrderLineItemID: "77"))
        let code = try entry(#","offer_code_ref_name":"PODCAST","cancellation_date_ms":"1500","cancellation_reason":"1""#)
        #expect(code.facts == TransactionFacts(environment: "Production", offerType: 3, offerIdentifier: "PODCAST", revocationReason: 1, webOrderLineItemID: "77"))
        let plain = try entry(#","promotional_offer_id":{"id":"x"}"#)
        #expect(plain.facts == TransactionFacts(environment: "Production", webOrderLineItemID: "77"), "a reshaped offer key reads as absent")
        #expect([trial, intro, promotional, code, plain].allSatisfy { $0.facts.price == nil && $0.facts.currency == nil && $0.facts.storefront == nil })
    }
}
