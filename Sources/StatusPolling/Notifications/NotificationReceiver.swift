import AppStoreBackends
import EntitlementCore
import Foundation
import Logging
import X509

/// The receiver's work on one posted body, apart from HTTP: tell V1 from V2, verify it (the JWS
/// chain and claims, or the shared secret), then record and apply it durably before answering.
/// Every reply says what the sender must hear: 200 for anything recorded (a duplicate or an
/// unmatched one included), 4xx for a body refused (nothing stored), 503 when the store could not
/// take the write (Apple retries).
public struct NotificationReceiver: Sendable {
    public struct Configuration: Sendable {
        /// The app every notification must be for.
        public var bundleID: String
        /// The app's Apple id: checked on production notifications when given.
        public var appAppleID: Int64?
        /// Authenticates V1 notifications; without it V1 is refused.
        public var sharedSecret: SharedSecret?
        /// Roots a signature chain may end in: Apple Root CA - G3 unless testing.
        public var trustedRoots: [Certificate]
        /// Most notifications written in one transaction.
        public var maxBatch: Int

        public init(bundleID: String, appAppleID: Int64? = nil, sharedSecret: SharedSecret? = nil, trustedRoots: [Certificate] = AppleRootCertificate.defaultRoots, maxBatch: Int = 256) {
            self.bundleID = bundleID
            self.appAppleID = appAppleID
            self.sharedSecret = sharedSecret
            self.trustedRoots = trustedRoots
            self.maxBatch = maxBatch
        }
    }

    /// What the sender hears.
    public enum Reply: Sendable, Equatable {
        /// Recorded (and applied when it could be): 200.
        case accepted(NotificationOutcome, version: Int, type: String)
        /// Refused before anything was stored: 4xx.
        case refused(NotificationRefusal)
        /// The store could not take the write: 503, so Apple sends it again.
        case unavailable(String)

        public var httpStatus: Int {
            switch self {
            case .accepted: return 200
            case .refused(let refusal): return refusal.reason.httpStatus
            case .unavailable: return 503
            }
        }
    }

    private let inbox: any NotificationInbox
    private let configuration: Configuration
    private let verifier: SignedDataVerifier
    private let queue: NotificationCommitQueue
    private let clock: @Sendable () -> Int64
    private let logger: Logger

    public init(_ configuration: Configuration, inbox: any NotificationInbox, logger: Logger, clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }) {
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.inbox = inbox
        verifier = SignedDataVerifier(trustedRoots: configuration.trustedRoots, bundleID: configuration.bundleID)
        queue = NotificationCommitQueue(
            inbox: inbox, ingest: NotificationIngest(bundleID: configuration.bundleID), maxBatch: configuration.maxBatch, clock: clock)
    }

    /// Verifies, records and applies one body from `source`. Logs ids and outcomes, never a body.
    public func receive(_ body: [UInt8], source: NotificationSource = .push) async -> Reply {
        let notification: ReceivedNotification
        do {
            notification = try await verified(body, source: source)
        } catch {
            logger.notice("refused a notification", metadata: ["reason": "\(error.reason.rawValue)", "detail": "\(error.detail)"])
            return .refused(error)
        }
        logger.trace("notification verified; recording it", metadata: ["notification_id": "\(notification.id)"])
        do {
            let outcome = try await queue.commit(notification)
            logger.debug("notification recorded", metadata: [
                "notification_id": "\(notification.id)", "type": "\(notification.name)", "outcome": "\(outcome.rawValue)",
                "original_transaction_id": "\(notification.originalTransactionID ?? "-")",
            ])
            return .accepted(outcome, version: notification.version, type: notification.type)
        } catch {
            logger.error("could not record a notification; the sender will retry", metadata: ["notification_id": "\(notification.id)", "error": "\(error)"])
            return .unavailable("\(error)")
        }
    }

    /// Receives again the unmatched notifications a row enrolled since links by its
    /// `app_account_token`, each verified again (at its own `signedDate`, as the first time).
    /// Returns how many a row took. The receiver calls it at start and then every minute.
    public func adoptWaiting(limit: Int = 256) async throws -> Int {
        var adopted = 0
        for waiting in try await inbox.waitingForAdoption(limit: limit) {
            guard let signed = try? await verifier.verifyNotification(waiting.signedPayload, appAppleID: configuration.appAppleID) else {
                logger.warning("a waiting notification no longer verifies; left unmatched", metadata: ["notification_id": "\(waiting.id)"])
                continue
            }
            let outcome = try await queue.commit(ReceivedNotification(signed, signedPayload: waiting.signedPayload, source: .push, receivedAtMs: clock()))
            if outcome != .unmatched { adopted += 1 }
            logger.info("a row enrolled since took a waiting notification", metadata: ["notification_id": "\(waiting.id)", "outcome": "\(outcome.rawValue)"])
        }
        return adopted
    }

    private func verified(_ body: [UInt8], source: NotificationSource) async throws(NotificationRefusal) -> ReceivedNotification {
        switch try NotificationBody(body) {
        case .version2(let signedPayload):
            do {
                let signed = try await verifier.verifyNotification(signedPayload, appAppleID: configuration.appAppleID)
                if signed.lacksRenewalInfo {
                    logger.notice("a notification without renewal info; its status sets billing retry and grace, the row keeps its other renewal columns", metadata: [
                        "notification_id": "\(signed.notificationUUID)", "type": "\(signed.name)", "original_transaction_id": "\(signed.originalTransactionID ?? "-")",
                        "apple_status": "\(signed.status.map(String.init) ?? "-")",
                    ])
                }
                return ReceivedNotification(signed, signedPayload: signedPayload, source: source, receivedAtMs: clock())
            } catch {
                throw NotificationRefusal(error.isUntrusted ? .signature : .malformed, error.description)
            }
        case .version1(let v1):
            guard let secret = configuration.sharedSecret else {
                throw NotificationRefusal(.versionOneDisabled, "a version 1 notification, and no shared secret is configured to authenticate it")
            }
            guard v1.authenticates(with: secret) else { throw NotificationRefusal(.password, "the version 1 notification's password is not the shared secret") }
            guard v1.bundleID == nil || v1.bundleID == configuration.bundleID else {
                throw NotificationRefusal(.otherApp, "the notification is for bundle \(v1.bundleID ?? "(none)"), expected \(configuration.bundleID)")
            }
            return v1.received(source: source, receivedAtMs: clock())
        }
    }
}
