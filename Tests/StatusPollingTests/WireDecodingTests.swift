import Foundation
import NIOCore
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Apple's real shapes: strings for numbers and booleans, both retry-flag spellings, a single object
/// for an array, unknown keys, missing arrays; and malformed values rejected, not read as absent.
@Suite struct WireDecodingTests {
    func decode(_ data: Data) throws -> VerifyReceiptResponse {
        try VerifyReceiptResponse(json: data)
    }

    @Test func productionRenewalWithStringValuesAndUnknownKeys() throws {
        let response = try decode(Fixture.data("renewal-production.json"))
        #expect(response.status == .valid)
        #expect(response.environment == "Production")
        #expect(response.receipt?.bundleID == "com.example.premium")
        #expect(response.latestReceipt == "MIIT5QYJKoZIhvcNAQcCoIIT1jCCE9ICAQExCzAJBgUrDgMCGgUAMIIDhgYJKoZIhvcNAQcBoIIDdwSCA3Mx")
        #expect(response.latestReceiptInfo.count == 2)
        let first = response.latestReceiptInfo[0]
        #expect(first.expiresDateMs == 1_570_356_000_000)
        #expect(first.purchaseDateMs == 1_567_764_000_000)
        #expect(first.originalTransactionID == "470000512345678")
        #expect(first.transactionID == "470000534567890")
        #expect(first.isUpgraded == false)
        #expect(first.isTrialPeriod == false)
        #expect(first.cancellationDateMs == nil)
        #expect(first.subscriptionGroupIdentifier == "20537620")
        #expect(response.pendingRenewalInfo == [
            PendingRenewalInfo(
                originalTransactionID: "470000512345678", productID: "com.example.premium.monthly",
                autoRenewProductID: "com.example.premium.monthly", autoRenewStatus: true)
        ])
        #expect(response.isRetryable == nil)
    }

    @Test func latestReceiptInfoAsASingleObjectAndGracePeriod() throws {
        let response = try decode(Fixture.data("grace-period-single-object.json"))
        #expect(response.environment == "Sandbox")
        #expect(response.latestReceiptInfo.map(\.transactionID) == ["1000000999"])
        #expect(response.latestReceipt == nil)
        let renewal = try #require(response.pendingRenewalInfo.first)
        #expect(renewal.gracePeriodExpiresDateMs == 1_571_738_400_000)
        #expect(renewal.isInBillingRetryPeriod == true)
        #expect(renewal.expirationIntent == 2)
        #expect(renewal.autoRenewStatus == true)
    }

    @Test(arguments: [
        ("internal-error-is_retryable.json", 21100, true as Bool?),
        ("internal-error-is-retryable-false.json", 21199, false as Bool?),
    ])
    func retryFlagInBothSpellings(file: String, status: Int, flag: Bool?) throws {
        let response = try decode(Fixture.data(file))
        #expect(response.status.rawValue == status)
        #expect(response.isRetryable == flag)
        #expect(response.latestReceiptInfo.isEmpty)
        #expect(response.pendingRenewalInfo.isEmpty)
    }

    @Test(arguments: [
        (#"{"status": 21100, "is-retryable": true}"#, true as Bool?),
        (#"{"status": 21100, "is-retryable": "false"}"#, false as Bool?),
        (#"{"status": 21100, "is_retryable": 1}"#, true as Bool?),
        (#"{"status": "21100", "is_retryable": "0"}"#, false as Bool?),
        (#"{"status": 21100}"#, nil as Bool?),
    ])
    func retryFlagTypes(body: String, expected: Bool?) throws {
        let response = try decode(Data(body.utf8))
        #expect(response.status == VerifyReceiptStatus(rawValue: 21100))
        #expect(response.isRetryable == expected)
    }

    @Test func numbersMayArriveAsNumbers() throws {
        let body = #"{"status": 0, "latest_receipt_info": [{"original_transaction_id": 42, "expires_date_ms": 1570356000000, "is_upgraded": true}], "pending_renewal_info": [{"original_transaction_id": "42", "auto_renew_status": 0, "expiration_intent": 1}]}"#
        let response = try decode(Data(body.utf8))
        #expect(response.latestReceiptInfo == [LatestReceiptInfo(productID: nil, originalTransactionID: "42", expiresDateMs: 1_570_356_000_000, isUpgraded: true)])
        #expect(response.pendingRenewalInfo == [PendingRenewalInfo(originalTransactionID: "42", autoRenewStatus: false, expirationIntent: 1)])
    }

    @Test func malformedValueIsAnErrorNotAnAbsence() {
        #expect(throws: WireFormatError.self) { try decode(Fixture.data("malformed-expires.json")) }
    }

    @Test func answerWithoutStatusIsAnError() {
        #expect(throws: WireFormatError.self) { try decode(Data(#"{"environment": "Production"}"#.utf8)) }
    }

    @Test func requestBodyUsesApplesKeys() throws {
        let body = VerifyReceiptRequest(receiptData: "UkVDRUlQVA==", password: "s3cr3t", excludeOldTransactions: true).body
        #expect(String(buffer: body) == #"{"receipt-data":"UkVDRUlQVA==","password":"s3cr3t","exclude-old-transactions":true}"#)
        let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        #expect(object?["receipt-data"] as? String == "UkVDRUlQVA==")
        #expect(object?["password"] as? String == "s3cr3t")
        #expect(object?["exclude-old-transactions"] as? Bool == true)
        #expect(object?.count == 3)
    }

    @Test func requestBodyEscapesWhatJSONRequires() throws {
        let secret = "q\"b\\s\u{1}\n\té/"
        let body = VerifyReceiptRequest(receiptData: "a+b/c=", password: secret, excludeOldTransactions: false).body
        #expect(String(buffer: body) == #"{"receipt-data":"a+b/c=","password":"q\"b\\s\u0001\n\té/","exclude-old-transactions":false}"#)
        let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        #expect(object?["password"] as? String == secret)
        #expect(object?["exclude-old-transactions"] as? Bool == false)
    }

    @Test func bodyClassification() throws {
        let html = try Fixture.data("outage-page.html")
        guard case .transient(let failure, nil) = VerifyReceiptClient.decode(ByteBuffer(bytes: html), environment: .production, httpStatus: 200) else {
            Issue.record("an HTML page must be a transient failure"); return
        }
        #expect(failure.reason == .notJSON)
        guard case .transient(let truncated, nil) = VerifyReceiptClient.decode(ByteBuffer(string: #"{"status": 0, "lat"#), environment: .sandbox, httpStatus: 200) else {
            Issue.record("a truncated body must be a transient failure"); return
        }
        #expect(truncated.reason == .notJSON)
        guard case .permanent(let shape) = VerifyReceiptClient.decode(ByteBuffer(bytes: try Fixture.data("malformed-expires.json")), environment: .production, httpStatus: 200) else {
            Issue.record("JSON of the wrong shape must be a permanent failure"); return
        }
        #expect(shape.reason == .unexpectedResponse)
        #expect(shape.detail.contains("latest_receipt_info.0.expires_date_ms"))
        #expect(!shape.detail.contains("next tuesday"))
    }
}
