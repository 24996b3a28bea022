import Crypto
import EntitlementCore

/// An App Store Server Notification of version 1 (`responseBodyV1`): unsigned JSON whose only
/// proof of origin is `password`, the app's shared secret. Both of its shapes are read: Apple's
/// current one, with `unified_receipt` (`latest_receipt`, `latest_receipt_info`,
/// `pending_renewal_info`), and seed 004's, with `latest_receipt` and `latest_receipt_info` at the
/// top and the renewal state in `auto_renew_status`, `auto_renew_product_id` and `expiration_intent`.
public struct NotificationV1: Sendable {
    public var type: String
    public var environment: AppStoreEnvironment?
    public var bundleID: String?
    public var originalTransactionID: String?
    /// The receipt data, decided exactly as a verifyReceipt answer would be.
    public var receipt: VerifyReceiptResponse
    /// `auto_renew_status_change_date_ms`.
    public var autoRenewStatusChangeDateMs: Int64?
    /// `v1:` and the SHA-256 of the body: V1 has no notification id, and Apple's retries repeat the body.
    public var id: String
    /// Kept apart from the fields so nothing else can read it: only ``authenticates(with:)`` does.
    private let password: String?

    /// Reads a body. Throws ``NotificationRefusal`` when it is not JSON or not a V1 notification.
    public init(body: [UInt8]) throws(NotificationRefusal) {
        let document: JSONValue
        do {
            document = try JSONValue.parse(body)
        } catch {
            throw NotificationRefusal(.malformed, "the body is not a JSON object")
        }
        try self.init(document: document, body: body)
    }

    /// The body already parsed (`NotificationBody` reads it once to tell the versions apart).
    init(document: JSONValue, body: [UInt8]) throws(NotificationRefusal) {
        let o: WireObject
        do {
            o = try WireObject(document: document)
        } catch {
            throw NotificationRefusal(.malformed, "the body is not a JSON object")
        }
        do {
            guard let type = try o.string("notification_type"), !type.isEmpty else {
                throw NotificationRefusal(.malformed, "the body has no notification_type")
            }
            self.type = type
            password = try o.string("password")
            environment = try o.string("environment").flatMap(Self.environment)
            bundleID = try o.string("bid")
            originalTransactionID = try o.string("original_transaction_id")
            autoRenewStatusChangeDateMs = try o.int64("auto_renew_status_change_date_ms")
            let unified = try o.object("unified_receipt")
            let source = unified ?? o
            var renewals = try source.objects("pending_renewal_info").map(PendingRenewalInfo.init)
            let infos = try source.objects("latest_receipt_info").map(LatestReceiptInfo.init)
            if renewals.isEmpty, let chain = originalTransactionID ?? infos.first?.originalTransactionID {
                // Seed 004's shape: the renewal state sits at the top of the body.
                renewals = [PendingRenewalInfo(
                    originalTransactionID: chain, autoRenewProductID: try o.string("auto_renew_product_id"), autoRenewStatus: try o.bool("auto_renew_status"),
                    expirationIntent: try o.int64("expiration_intent").map { Int(clamping: $0) })]
            }
            let environmentName = try unified?.string("environment") ?? environment?.rawValue
            receipt = VerifyReceiptResponse(
                status: .valid, environment: environmentName, receipt: .init(bundleID: bundleID), latestReceipt: try source.string("latest_receipt"),
                latestReceiptInfo: infos, pendingRenewalInfo: renewals)
            originalTransactionID = originalTransactionID ?? infos.first?.originalTransactionID
        } catch let refusal as NotificationRefusal {
            throw refusal
        } catch {
            throw NotificationRefusal(.malformed, "the body is not a V1 notification: \(error)")
        }
        id = "v1:" + SHA256.hash(data: body).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// `PROD` (V1's spelling) or `Production`, and `Sandbox`.
    private static func environment(_ text: String) -> AppStoreEnvironment? {
        switch text.lowercased() {
        case "prod", "production": return .production
        case "sandbox": return .sandbox
        default: return nil
        }
    }

    /// Whether its `password` is `secret`, compared in constant time, so the time of a refusal
    /// says nothing about how much of a guess was right.
    public func authenticates(with secret: SharedSecret) -> Bool {
        guard let password else { return false }
        let (given, expected) = (Array(password.utf8), Array(secret.value.utf8))
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in 0..<expected.count {
            difference |= expected[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0
    }

    /// When its data was true: the latest Apple event its receipt data names — a purchase or
    /// renewal, a refund, a change of auto-renew, or an expiry already past — never later than its
    /// arrival. A retry delivered days late is then older than a poll made meanwhile, so it is stale.
    public func appleStateAtMs(receivedAtMs: Int64) -> Int64 {
        var events = receipt.latestReceiptInfo.flatMap { [$0.purchaseDateMs, $0.cancellationDateMs] }.compactMap { $0 }
        events += receipt.latestReceiptInfo.compactMap(\.expiresDateMs).filter { $0 <= receivedAtMs }
        if let changed = autoRenewStatusChangeDateMs { events.append(changed) }
        return min(events.max() ?? receivedAtMs, receivedAtMs)
    }

    /// The notification as the store records and applies it.
    public func received(source: NotificationSource, receivedAtMs: Int64) -> ReceivedNotification {
        var answer = receipt.statusAnswer
        answer.upstreamStatus = UpstreamStatus(backend: .notification, code: 0)
        return ReceivedNotification(
            id: id, version: 1, type: type, subtype: nil, signedAtMs: nil, appleStateAtMs: appleStateAtMs(receivedAtMs: receivedAtMs),
            originalTransactionID: originalTransactionID, appAccountToken: nil, environment: environment, source: source,
            receivedAtMs: receivedAtMs, answer: receipt.latestReceiptInfo.isEmpty ? nil : answer)
    }
}
