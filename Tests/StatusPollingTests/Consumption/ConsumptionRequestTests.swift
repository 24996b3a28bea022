import AppStoreSimulator
import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// Apple's `CONSUMPTION_REQUEST` on every store, answered against the simulator over loopback:
/// queued in the notification's own transaction without touching the row's entitlement, sent once
/// with the policy's exact body, refused and expired requests recorded, nothing sent without
/// consent or after the deadline, retries after a 5xx and a 429. One case at a time, each without
/// a night run: twenty PostgreSQL fixtures with their runs' pools at once, beside the rest of the
/// suite, exhausted the tests' server (200 connections).
@Suite(.serialized) struct ConsumptionRequestTests {
    typealias Fixture = ConsumptionFixture
    static let hour: Int64 = 3_600_000
    static let delivered = #"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#

    @Test(arguments: StoreKind.available) func aRequestIsQueuedWithTheNotificationAndChangesNoEntitlement(kind: StoreKind) async throws {
        try await Fixture.with(kind) { f in
            let (userID, chain, transaction) = try await f.paidChain()
            let before = try await f.support.row(owning: chain)
            let signed = f.clock.ms - Self.hour
            let outcomes = try await f.receive(f.request(id: "cr-1", chain: chain, transaction: transaction, signedAtMs: signed))
            #expect(outcomes == [.unchanged])
            let queued = try await f.recorded("cr-1")
            #expect(queued == ConsumptionRequestRecord(
                notificationID: "cr-1", transactionID: transaction.transactionID, originalTransactionID: chain, subscriptionID: before.id, userID: userID,
                environment: .production, requestedAtMs: signed, deadlineMs: signed + 12 * Self.hour, periodStartedAtMs: transaction.purchaseMs,
                deliveryStatus: .delivered, priorRefunds: 0, state: .pending, attempts: 0, nextAttemptAtMs: signed))
            let after = try await f.support.row(owning: chain).state
            #expect(after == before.state)
            // The same notification again is a duplicate and queues nothing more.
            #expect(try await f.receive(f.request(id: "cr-1", chain: chain, transaction: transaction, signedAtMs: signed)) == [.duplicate])
            #expect(try await f.db.store.consumptionRequests(ConsumptionQuery()).count == 1)
        }
    }

    /// The queueing is part of the notification's transaction: when it fails, the notification
    /// is not recorded either (Apple hears an error and sends it again).
    @Test(arguments: StoreKind.available) func aQueueThatFailsRecordsNoNotification(kind: StoreKind) async throws {
        try await Fixture.with(kind) { f in
            let (_, chain, transaction) = try await f.paidChain()
            if kind == .sqlite {
                try await f.db.execute("CREATE TRIGGER refuse BEFORE INSERT ON consumption_requests BEGIN SELECT RAISE(ABORT, 'refused'); END")
            } else {
                try await f.db.execute("CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$")
                try await f.db.execute("CREATE TRIGGER refuse BEFORE INSERT ON consumption_requests FOR EACH ROW EXECUTE FUNCTION refuse()")
            }
            await #expect(throws: (any Error).self) {
                try await f.receive(f.request(id: "cr-2", chain: chain, transaction: transaction, signedAtMs: f.clock.ms))
            }
            #expect(try await f.db.row("SELECT count(*) AS n FROM app_store_notifications WHERE notification_id = 'cr-2'") == ["n": "0"])
        }
    }

    @Test(arguments: StoreKind.available, [NotificationSource.push, .history])
    func anAnswerIsSentOnceWithThePolicysExactBody(kind: StoreKind, source: NotificationSource) async throws {
        try await Fixture.with(kind) { f in
            let (userID, chain, transaction) = try await f.paidChain()
            _ = try await f.receive(f.request(id: "cr-3", chain: chain, transaction: transaction, signedAtMs: f.clock.ms - Self.hour, source: source))
            try await f.db.store.recordConsumptionConsent(userID: userID, consented: true, lastUsedAtMs: nil, nowMs: f.clock.ms)
            var pass = ConsumptionPass()
            pass.sent = 1
            #expect(try await f.sender().sendDue() == pass)
            #expect(f.simulator.consumptionAnswers == [SimulatedConsumptionAnswer(
                transactionID: transaction.transactionID, environment: "Production", atMs: f.simulator.nowMs, body: Self.delivered, refundPreference: nil)])
            let sent = try await f.recorded("cr-3")
            #expect(sent.state == .sent)
            #expect(sent.appleStatus == 202)
            #expect(sent.attempts == 1)
            #expect(sent.body == Self.delivered)
            #expect(sent.sentAtMs == f.clock.ms)
            #expect(sent.answeredOnTime)
            // Never again after the recorded 202, whatever the clock.
            f.clock.set(f.clock.ms + Self.hour)
            #expect(try await f.sender().sendDue() == ConsumptionPass())
            #expect(f.simulator.consumptionAnswers.count == 1)
        }
    }

    @Test(arguments: StoreKind.available) func theRefundPreferenceFollowsTheFirstMatchingRule(kind: StoreKind) async throws {
        try await Fixture.with(kind) { f in
            let (userID, chain, transaction) = try await f.paidChain()
            _ = try await f.receive(f.request(id: "cr-4", chain: chain, transaction: transaction, signedAtMs: f.clock.ms))
            // Used in the period: the first rule (unused, early) does not match, the second does.
            try await f.db.store.recordConsumptionConsent(userID: userID, consented: true, lastUsedAtMs: transaction.purchaseMs + 1, nowMs: f.clock.ms)
            let policy = ConsumptionPolicy(sampleContentProvided: true, rules: [
                RefundPreferenceRule(prefer: .grantFull, maxDaysSincePeriodStart: 3, periodUsed: false),
                RefundPreferenceRule(prefer: .decline, periodUsed: true),
            ])
            #expect(try await f.sender(policy).sendDue().sent == 1)
            let body = #"{"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"DECLINE","sampleContentProvided":true}"#
            #expect(f.simulator.consumptionAnswers.map(\.body) == [body])
            let sent = try await f.recorded("cr-4")
            #expect(sent.refundPreference == .decline)
            #expect(sent.lastUsedAtMs == transaction.purchaseMs + 1)
        }
    }

    @Test(arguments: StoreKind.available) func withoutConsentNothingIsSent(kind: StoreKind) async throws {
        try await Fixture.with(kind) { f in
            let (userID, chain, transaction) = try await f.paidChain()
            _ = try await f.receive(f.request(id: "cr-5", chain: chain, transaction: transaction, signedAtMs: f.clock.ms))
            try await f.db.store.recordConsumptionConsent(userID: userID, consented: false, lastUsedAtMs: nil, nowMs: f.clock.ms)
            #expect(try await f.sender().sendDue().noConsent == 1)
            #expect(f.simulator.consumptionAnswers.isEmpty)
            let request = try await f.recorded("cr-5")
            #expect(request.state == .noConsent)
            #expect(request.attempts == 0)
            #expect(request.body == nil)
        }
    }

    /// The web service has not written about the customer: the request waits, looked at again
    /// every five minutes, and goes once consent is recorded within the window.
    @Test(arguments: StoreKind.available) func consentWrittenWithinTheWindowIsWaitedFor(kind: StoreKind) async throws {
        try await Fixture.with(kind) { f in
            let (userID, chain, transaction) = try await f.paidChain()
            _ = try await f.receive(f.request(id: "cr-9", chain: chain, transaction: transaction, signedAtMs: f.clock.ms - 2 * Self.hour))
            var expected = ConsumptionPass()
            expected.awaitingConsent = 1
            #expect(try await f.sender().sendDue() == expected)
            let waiting = try await f.recorded("cr-9")
            #expect(waiting.state == .pending)
            #expect(waiting.nextAttemptAtMs == f.clock.ms + 300_000)
            #expect(waiting.attempts == 0)
            #expect(waiting.body == nil)
            try await f.db.store.recordConsumptionConsent(userID: userID, consented: true, lastUsedAtMs: nil, nowMs: f.clock.ms)
            #expect(try await f.sender().sendDue() == ConsumptionPass(), "not looked at again before the recheck")

            f.clock.set(f.clock.ms + 300_000)
            expected = ConsumptionPass()
            expected.sent = 1
            #expect(try await f.sender().sendDue() == expected)
            #expect(try await f.recorded("cr-9").state == .sent)
            #expect(f.simulator.consumptionAnswers.count == 1)
        }
    }

    /// Still nothing about the customer when the window closes: `no_consent` (not `expired`), never sent.
    @Test(arguments: StoreKind.available) func nothingWrittenByTheDeadlineIsNoConsent(kind: StoreKind) async throws {
        try await Fixture.with(kind) { f in
            let (_, chain, transaction) = try await f.paidChain()
            _ = try await f.receive(f.request(id: "cr-10", chain: chain, transaction: transaction, signedAtMs: f.clock.ms - 12 * Self.hour + 180_000))
            #expect(try await f.sender().sendDue().awaitingConsent == 1)
            let deadline = f.clock.ms + 180_000
            #expect(try await f.recorded("cr-10").nextAttemptAtMs == deadline, "the last look is at the deadline")
            f.clock.set(deadline)
            var expected = ConsumptionPass()
            expected.noConsent = 1
            #expect(try await f.sender().sendDue() == expected)
            let request = try await f.recorded("cr-10")
            #expect(request.state == .noConsent)
            #expect(request.attempts == 0)
            #expect(f.simulator.consumptionAnswers.isEmpty)
        }
    }

    @Test(arguments: StoreKind.available) func pastTheDeadlineItExpiresUnsent(kind: StoreKind) async throws {
        try await Fixture.with(kind) { f in
            let (userID, chain, transaction) = try await f.paidChain()
            let signed = f.clock.ms - 12 * Self.hour
            _ = try await f.receive(f.request(id: "cr-6", chain: chain, transaction: transaction, signedAtMs: signed))
            try await f.db.store.recordConsumptionConsent(userID: userID, consented: true, lastUsedAtMs: nil, nowMs: f.clock.ms)
            #expect(try await f.sender().sendDue().expired == 1)
            #expect(f.simulator.consumptionAnswers.isEmpty)
            #expect(try await f.recorded("cr-6").state == .expired)
            #expect(try await f.db.store.consumptionRequests(ConsumptionQuery(states: ConsumptionQuery.failedStates)).map(\.notificationID) == ["cr-6"])
        }
    }

    /// A transaction Apple does not know: 404 4040010, recorded as a refusal, not sent again.
    @Test(arguments: StoreKind.available) func anUnknownTransactionIsRefusedAndRecorded(kind: StoreKind) async throws {
        try await Fixture.with(kind) { f in
            let (userID, chain, transaction) = try await f.paidChain()
            _ = try await f.receive(f.request(id: "cr-7", chain: chain, transaction: transaction, signedAtMs: f.clock.ms, transactionID: "9999999999"))
            try await f.db.store.recordConsumptionConsent(userID: userID, consented: true, lastUsedAtMs: nil, nowMs: f.clock.ms)
            #expect(try await f.sender().sendDue().refused == 1)
            let refused = try await f.recorded("cr-7")
            #expect(refused.state == .refused)
            #expect(refused.appleStatus == 404)
            #expect(refused.appleError == 4_040_010)
            #expect(try await f.sender().sendDue() == ConsumptionPass())
        }
    }

    @Test(arguments: StoreKind.available) func a5xxAndA429AreRetriedUntilApplesAccepts(kind: StoreKind) async throws {
        try await Fixture.with(kind) { f in
            let (userID, chain, transaction) = try await f.paidChain()
            _ = try await f.receive(f.request(id: "cr-8", chain: chain, transaction: transaction, signedAtMs: f.clock.ms))
            try await f.db.store.recordConsumptionConsent(userID: userID, consented: true, lastUsedAtMs: nil, nowMs: f.clock.ms)
            f.simulator.failNextConsumptionRequests([503, 429])
            let t0 = f.clock.ms
            #expect(try await f.sender().sendDue().retried == 1)
            var request = try await f.recorded("cr-8")
            #expect(request.state == .pending)
            #expect(request.appleStatus == 503)
            #expect(request.nextAttemptAtMs == t0 + 30_000)
            // Not due before then.
            #expect(try await f.sender().sendDue() == ConsumptionPass())
            f.clock.set(t0 + 30_000)
            #expect(try await f.sender().sendDue().retried == 1)
            request = try await f.recorded("cr-8")
            #expect(request.appleStatus == 429)
            #expect(request.appleError == 4_290_000)
            // Apple's Retry-After (the simulator's 1 s, a UNIX time in ms) sets the next attempt.
            #expect(request.nextAttemptAtMs > t0 + 30_000 && request.nextAttemptAtMs <= t0 + 31_000)
            f.clock.set(t0 + 31_000)
            #expect(try await f.sender().sendDue().sent == 1)
            request = try await f.recorded("cr-8")
            #expect(request.state == .sent)
            #expect(request.attempts == 3)
            #expect(f.simulator.consumptionAnswers.map(\.body) == [Self.delivered])
        }
    }

    /// Apple's validation, asked directly: `customerConsented` false is 400 4000035.
    @Test func theSimulatorRefusesAnAnswerWithoutConsentAsAppleDoes() async throws {
        try await Fixture.with(.sqlite) { f in
            let (_, _, transaction) = try await f.paidChain()
            let refusedBody = #"{"customerConsented":false,"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#
            let outcome = try await f.support.client.sendConsumptionInformation(
                transactionID: transaction.transactionID, body: refusedBody, in: .production, logger: f.support.logger)
            #expect(outcome == .refused(httpStatus: 400, appleError: 4_000_035))
            let badDelivery = #"{"customerConsented":true,"deliveryStatus":"LOST","sampleContentProvided":false}"#
            #expect(try await f.support.client.sendConsumptionInformation(
                transactionID: transaction.transactionID, body: badDelivery, in: .production, logger: f.support.logger) == .refused(httpStatus: 400, appleError: 4_000_036))
            #expect(f.simulator.consumptionAnswers.isEmpty)
        }
    }

    /// The loop `notifications serve` runs (``ConsumptionService``): a request stored while it
    /// runs is answered by a later pass without anyone calling it; a stop ends the loop.
    @Test(arguments: StoreKind.available) func theServiceLoopAnswersARequestStoredWhileItRuns(kind: StoreKind) async throws {
        try await Fixture.with(kind) { f in
            let (userID, chain, transaction) = try await f.paidChain()
            try await f.db.store.recordConsumptionConsent(userID: userID, consented: true, lastUsedAtMs: nil, nowMs: f.clock.ms)
            let stop = StopSignal()
            let sender = f.sender()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await sender.run(until: stop, idle: .milliseconds(20)) }
                _ = try await f.receive(f.request(id: "cr-9", chain: chain, transaction: transaction, signedAtMs: f.clock.ms))
                #expect(try await eventually { try await f.recorded("cr-9").state == .sent })
                stop.request()
                try await group.waitForAll()
            }
            #expect(f.simulator.consumptionAnswers.map(\.body) == [Self.delivered])
        }
    }

    /// What we know when the request comes decides `deliveryStatus`: a failed verification
    /// standing on the row makes it `UNDELIVERED_OTHER`, and the customer's earlier refunds in the
    /// trail are counted.
    @Test(arguments: StoreKind.available) func aFailureStandingOnTheRowIsUndeliveredAndEarlierRefundsAreCounted(kind: StoreKind) async throws {
        try await Fixture.with(kind) { f in
            let (userID, chain, transaction) = try await f.paidChain()
            let row = try await f.support.row(owning: chain)
            try await f.db.execute("UPDATE subscriptions SET consecutive_failures = 2 WHERE id = \(row.id)")
            try await f.db.execute("""
                INSERT INTO subscription_events (subscription_id, user_id, at, reason, entitlement_before, entitlement_after, old_values, new_values)
                VALUES (\(row.id), '\(userID)', 1, 'refunded_earlier_period', 'active', 'active', '{}', '{}')
                """)
            _ = try await f.receive(f.request(id: "cr-10", chain: chain, transaction: transaction, signedAtMs: f.clock.ms))
            let queued = try await f.recorded("cr-10")
            #expect(queued.deliveryStatus == .undeliveredOther)
            #expect(queued.priorRefunds == 1)
        }
    }

    /// Prior refunds are refunded transactions, each once by id: the ledger's, and the trail's
    /// refunds of transactions it does not hold. Two audit rows of one refund (a history poll and
    /// its delayed notification, before the ledger kept them apart) are one; a reversed refund, an
    /// upgrade's end and a Family Sharing revocation are none; an old audit row names its
    /// transaction in its new values, and one naming none is its own.
    @Test(arguments: StoreKind.available) func priorRefundsCountEachRefundedTransactionOnce(kind: StoreKind) async throws {
        try await Fixture.with(kind) { f in
            let (userID, chain, transaction) = try await f.paidChain()
            let row = try await f.support.row(owning: chain)
            func audit(_ reason: String, _ transactionID: String?, newValues: String = "{}") async throws {
                try await f.db.execute("""
                    INSERT INTO subscription_events (subscription_id, user_id, at, reason, entitlement_before, entitlement_after, old_values, new_values, transaction_id)
                    VALUES (\(row.id), '\(userID)', 1, '\(reason)', 'active', 'active', '{}', '\(newValues)', \(transactionID.map { "'\($0)'" } ?? "NULL"))
                    """)
            }
            func ledger(_ id: String, revokedAt: Int64?, type: String? = nil, upgraded: Int = 0) async throws {
                try await f.db.execute("""
                    INSERT INTO subscription_transactions (transaction_id, original_transaction_id, subscription_id, revoked_at, revocation_type, is_upgraded,
                        as_of, first_source, first_seen_at, updated_at)
                    VALUES ('\(id)', '\(chain)', \(row.id), \(revokedAt.map(String.init) ?? "NULL"), \(type.map { "'\($0)'" } ?? "NULL"), \(upgraded), 1, 'poll', 1, 1)
                    """)
            }
            try await ledger("9001", revokedAt: 5, type: "REFUND_FULL")
            try await audit("refunded_earlier_period", "9001")
            try await audit("refunded_earlier_period", "9001")
            try await ledger("9002", revokedAt: nil)
            try await audit("refunded", "9002")
            try await ledger("9003", revokedAt: 6, type: "FAMILY_REVOKE")
            try await ledger("9004", revokedAt: 7, upgraded: 1)
            try await ledger("9005", revokedAt: 8, type: "REFUND_PRORATED")
            // Written before rows named their transaction: its new values do.
            try await audit("refunded", nil, newValues: #"{"cancelled_at":8,"transaction_id":"9005"}"#)
            try await audit("refunded", nil)
            try await audit("refunded_earlier_period", "9006")
            try await audit("refunded_earlier_period", "9006")
            _ = try await f.receive(f.request(id: "cr-12", chain: chain, transaction: transaction, signedAtMs: f.clock.ms))
            // 9001, 9005, the unnamed audit row, 9006.
            #expect(try await f.recorded("cr-12").priorRefunds == 4)
        }
    }

    /// A refund and, delivered after it in one batch, Apple's earlier request about the same
    /// purchase: the request is queued as if received after the refund was applied — the refund
    /// counted, the period cut short — on both stores (PostgreSQL once queued every request of a
    /// batch before writing any of its notifications).
    @Test(arguments: StoreKind.available) func aRequestAfterARefundInOneBatchSeesTheRefund(kind: StoreKind) async throws {
        try await Fixture.with(kind) { f in
            let (_, chain, transaction) = try await f.paidChain()
            var refund = f.request(id: "refund-1", chain: chain, transaction: transaction, signedAtMs: f.clock.ms - 60_000)
            refund.type = "REFUND"
            refund.answer?.transactions[0].revocationDateMs = f.clock.ms - 60_000
            refund.answer?.subscriptionStatus = .revoked
            let request = f.request(id: "cr-11", chain: chain, transaction: transaction, signedAtMs: f.clock.ms - 120_000)
            let outcomes = try await f.db.store.receive([refund, request], ingest: NotificationIngest(bundleID: f.support.bundleID), nowMs: f.clock.ms)
            #expect(outcomes == [.applied, .stale])
            let queued = try await f.recorded("cr-11")
            #expect(queued.priorRefunds == 1)
            #expect(queued.deliveryStatus == .undeliveredOther)
        }
    }
}
