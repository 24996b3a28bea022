import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// A genuine-shaped App Store Server Notification V1 from another project's tests (imdhemy/appstore-iap,
/// MIT, its licence beside the file): a DID_CHANGE_RENEWAL_STATUS whose `unified_receipt` holds 54
/// `latest_receipt_info` entries of one chain across two products, every value a string as Apple
/// sends them, read through our V1 path exactly as the receiver reads a body.
@Suite struct NotificationV1CorpusTests {
    static let file = "v1-imdhemy-appstore-iap/server-notification.json"

    @Test func decodesThroughTheV1Path() throws {
        let body = Array(try AppleConformance.data(Self.file))
        guard case .version1(let notification) = try NotificationBody(body) else {
            Issue.record("not read as a version 1 notification")
            return
        }
        #expect(notification.type == "DID_CHANGE_RENEWAL_STATUS")
        #expect(notification.environment == .production)
        #expect(notification.bundleID == "com.some.thing")
        #expect(notification.originalTransactionID == "1000000723811158")
        #expect(notification.autoRenewStatusChangeDateMs == 1_606_293_002_000)
        #expect(notification.authenticates(with: SharedSecret("********")))
        #expect(!notification.authenticates(with: SharedSecret("another secret")))

        let receipt = notification.receipt
        #expect(receipt.environment == "Production")
        #expect(receipt.latestReceipt == "ZmFrZV9yZWNlaXB0")
        #expect(receipt.latestReceiptInfo.count == 54)
        #expect(Set(receipt.latestReceiptInfo.map(\.originalTransactionID)) == ["1000000723811158"])
        #expect(receipt.latestReceiptInfo.filter { $0.productID == "one_month_subscription" }.count == 48)
        #expect(receipt.latestReceiptInfo.filter { $0.productID == "one_year_subscription" }.count == 6)
        #expect(receipt.latestReceiptInfo.filter(\.isUpgraded).compactMap(\.transactionID).sorted()
            == ["1000000739321864", "1000000739325308", "1000000739325323", "1000000739325339"])
        #expect(receipt.latestReceiptInfo.allSatisfy { !$0.isTrialPeriod && !$0.isInIntroOfferPeriod && $0.cancellationDateMs == nil })
        #expect(receipt.latestReceiptInfo.first == LatestReceiptInfo(
            productID: "one_month_subscription", transactionID: "1000000746095599", originalTransactionID: "1000000723811158",
            purchaseDateMs: 1_606_292_762_000, expiresDateMs: 1_606_293_062_000, subscriptionGroupIdentifier: "20667927",
            webOrderLineItemID: "1000000057713932"))
        #expect(receipt.latestReceiptInfo.last?.transactionID == "1000000739321528")
        #expect(receipt.latestReceiptInfo.compactMap(\.expiresDateMs).max() == 1_606_293_062_000)
        #expect(receipt.latestReceiptInfo.compactMap(\.purchaseDateMs).min() == 1_601_297_753_000)
        #expect(receipt.pendingRenewalInfo == [PendingRenewalInfo(
            originalTransactionID: "1000000723811158", productID: "one_month_subscription", autoRenewProductID: "one_month_subscription",
            autoRenewStatus: false, expirationIntent: 1, isInBillingRetryPeriod: false)])

        // As the receiver records it: its data was true at its latest event, the last expiry.
        let received = notification.received(source: .push, receivedAtMs: 1_777_593_600_000)
        #expect(received.version == 1 && received.type == "DID_CHANGE_RENEWAL_STATUS" && received.subtype == nil)
        #expect(received.appleStateAtMs == 1_606_293_062_000)
        #expect(received.originalTransactionID == "1000000723811158")
        #expect(received.id.hasPrefix("v1:") && received.id.count == 3 + 64)
        #expect(received.answer != nil)
    }
}
