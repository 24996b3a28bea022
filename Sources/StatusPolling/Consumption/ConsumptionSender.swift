import AppStoreBackends
import EntitlementCore
import Foundation
import Logging

/// Answers Apple's consumption requests (`notifications serve`, `consumption send`): each pending
/// request due is expired once its deadline passed, settled `no_consent` when the web service
/// recorded no consent (or still nothing at the deadline; until then it is looked at again every
/// ``ConsumptionPolicy/consentRecheck``), or claimed (the body fixed at the first claim) and sent
/// through Send Consumption Information — 202 settles it `sent` for good, a 4xx `refused`, a 5xx,
/// a 429 or a failed connection puts it back for a retry after `Retry-After` or the backoff,
/// unless that falls past the deadline. A sender killed after Apple's 202 but before recording it sends the same body
/// again once the claim's lease ends; Apple accepts a repeat within the window.
public struct ConsumptionSender: Sendable {
    let ledger: any ConsumptionLedger
    let client: ServerAPIClient
    let policy: ConsumptionPolicy
    let logger: Logger
    let now: @Sendable () -> Int64

    public init(
        ledger: any ConsumptionLedger, client: ServerAPIClient, policy: ConsumptionPolicy, logger: Logger,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    ) {
        self.ledger = ledger
        self.client = client
        self.policy = policy
        self.logger = logger
        self.now = now
    }

    /// Every request due now, a page at a time, until none is left that this pass has not seen.
    /// Throws ``RunAbort`` when Apple refuses the credentials (nothing more can be sent).
    public func sendDue(pageSize: Int = 50) async throws -> ConsumptionPass {
        var pass = ConsumptionPass()
        var seen: Set<String> = []
        while true {
            let page = try await ledger.dueConsumptionRequests(nowMs: now(), limit: pageSize + seen.count).filter { !seen.contains($0.notificationID) }
            guard !page.isEmpty else { return pass }
            for request in page {
                seen.insert(request.notificationID)
                pass = pass + (try await answer(request))
            }
        }
    }

    /// One request.
    func answer(_ request: ConsumptionRequestRecord) async throws -> ConsumptionPass {
        var pass = ConsumptionPass()
        let id = request.notificationID
        let metadata: Logger.Metadata = ["notification.id": "\(id)", "transaction.id": "\(request.transactionID)"]
        let startMs = now()
        let information = policy.answer(request)
        // No consent recorded, or the window closed while the web service said nothing: never sent.
        if request.customerConsented == false || (information == nil && startMs >= request.deadlineMs) {
            try await ledger.settleConsumptionRequest(ConsumptionSettlement(id, state: .noConsent))
            logger.info("consumption request not answered: no customer consent", metadata: metadata)
            pass.noConsent = 1
            return pass
        }
        if startMs >= request.deadlineMs {
            try await ledger.settleConsumptionRequest(ConsumptionSettlement(id, state: .expired))
            logger.warning("consumption request expired unanswered", metadata: metadata)
            pass.expired = 1
            return pass
        }
        guard let information else {
            // The web service may still write the customer's consent within Apple's window.
            let next = min(startMs + policy.consentRecheck.milliseconds, request.deadlineMs)
            try await ledger.settleConsumptionRequest(ConsumptionSettlement(id, state: .pending, nextAttemptAtMs: next))
            pass.awaitingConsent = 1
            return pass
        }
        let lease = startMs + policy.claimLease.milliseconds
        guard let body = try await ledger.claimConsumptionRequest(id, nowMs: startMs, untilMs: lease, body: information.json, preference: information.refundPreference)
        else {
            pass.skipped = 1
            return pass
        }
        let outcome = try await client.sendConsumptionInformation(transactionID: request.transactionID, body: body, in: request.environment ?? .production, logger: logger)
        let answeredMs = now()
        switch outcome {
        case .accepted(let status):
            try await ledger.settleConsumptionRequest(ConsumptionSettlement(id, state: .sent, appleStatus: status, sentAtMs: answeredMs))
            logger.info("consumption information sent", metadata: metadata.merging(["apple.status": "\(status)"]) { $1 })
            pass.sent = 1
            pass.late = answeredMs > request.deadlineMs ? 1 : 0
        case .refused(let status, let code):
            try await ledger.settleConsumptionRequest(ConsumptionSettlement(id, state: .refused, appleStatus: status, appleError: code))
            logger.warning("Apple refused the consumption information", metadata: metadata.merging(["apple.status": "\(status ?? 0)", "apple.error": "\(code ?? 0)"]) { $1 })
            pass.refused = 1
        case .retry(let status, let code, let retryAfter):
            let next = answeredMs + policy.retryDelay(afterAttempts: request.attempts + 1, retryAfter: retryAfter).milliseconds
            let state: ConsumptionState = next >= request.deadlineMs ? .expired : .pending
            try await ledger.settleConsumptionRequest(ConsumptionSettlement(id, state: state, appleStatus: status, appleError: code, nextAttemptAtMs: next))
            logger.info("consumption information not taken; trying again", metadata: metadata.merging(["apple.status": "\(status ?? 0)", "retry_at_ms": "\(next)"]) { $1 })
            if state == .expired { pass.expired = 1 } else { pass.retried = 1 }
        }
        return pass
    }

    /// Passes until `stop`, `idle` apart: the loop of `notifications serve`, each pass handed to
    /// `counted` (the receiver's metrics). A failed pass is logged and tried again.
    public func run(until stop: StopSignal, idle: Duration = .seconds(1), counted: @Sendable (ConsumptionPass) -> Void = { _ in }) async {
        while !stop.isRequested {
            do {
                let pass = try await sendDue()
                counted(pass)
                if !pass.isEmpty {
                    logger.debug("answered consumption requests", metadata: [
                        "sent": "\(pass.sent)", "refused": "\(pass.refused)", "no_consent": "\(pass.noConsent)", "expired": "\(pass.expired)", "retried": "\(pass.retried)",
                    ])
                }
            } catch let abort as RunAbort {
                logger.error("the App Store Server API refuses the credentials; consumption requests wait", metadata: ["error": "\(abort)"])
            } catch {
                logger.warning("could not answer consumption requests; trying again", metadata: ["error": "\(error)"])
            }
            guard !stop.isRequested else { return }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await Task.sleep(for: idle) }
                group.addTask { await stop.wait() }
                await group.next()
                group.cancelAll()
            }
        }
    }
}
