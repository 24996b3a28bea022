import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import Synchronization

/// Delivers the outbox to the configured endpoints: each event as a signed POST (Standard
/// Webhooks), at least once, in order per user (a user's next event waits for the previous one's
/// 2xx), many users at once, failures retried with exponential backoff and jitter until the
/// policy's maximum age, then dead-lettered. The clock and the jitter's seed are injected.
public final class EventDeliverer: Sendable {
    let outbox: any EventOutbox
    let endpoints: [WebhookEndpoint]
    let policy: DeliveryPolicy
    /// This deliverer's name on the deliveries it leases (host and pid).
    let owner: String
    let client: WebhookClient
    let now: @Sendable () -> Int64
    let random: Mutex<SplitMix64>
    let logger: Logger
    let metrics: EventMetrics?

    /// The caller shuts `client` down.
    public init(
        outbox: any EventOutbox, endpoints: [WebhookEndpoint], policy: DeliveryPolicy = DeliveryPolicy(), owner: String, client: WebhookClient,
        now: @escaping @Sendable () -> Int64 = EventDeliverer.wallClock, random: SplitMix64 = SplitMix64(), logger: Logger,
        metrics: EventMetrics? = nil
    ) {
        self.outbox = outbox
        self.endpoints = endpoints
        self.policy = policy
        self.owner = owner
        self.client = client
        self.now = now
        self.random = Mutex(random)
        self.logger = logger
        self.metrics = metrics
    }

    @Sendable public static func wallClock() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// One pass: every endpoint at once, each until nothing is due at the clock's time — or, for
    /// a long-running deliverer, until `stop` is requested or `taking` has passed (new deliveries
    /// are then no longer taken; those in flight are finished and recorded).
    public func deliverDue(until stop: StopSignal? = nil, taking: Duration? = nil) async throws -> DeliveryReport {
        try await withThrowingTaskGroup(of: DeliveryReport.self) { group in
            for endpoint in endpoints { group.addTask { try await self.deliverDue(to: endpoint, until: stop, taking: taking) } }
            return try await group.reduce(DeliveryReport(), +)
        }
    }

    /// Keeps up to the policy's concurrency of the endpoint's deliveries in flight: as POSTs end,
    /// their outcomes are recorded together (those that ended meanwhile) while the places they
    /// free are taken again — the settle and the take at once, two round trips side by side. A
    /// batch never waits for its slowest POST; a user's next event goes with the take after the
    /// previous one's 2xx is recorded (the take beside that record still sees it leased). Events
    /// written meanwhile are fanned out when a take found fewer heads than free places, at most
    /// every ``fanOutSpacing``, and behind a standing backlog every ``backlogFanOutSpacing``.
    func deliverDue(to endpoint: WebhookEndpoint, until stop: StopSignal?, taking: Duration?) async throws -> DeliveryReport {
        let clock = ContinuousClock()
        let started = clock.now
        let ending = EndedAttempts()
        var report = DeliveryReport()
        var fannedOutAt: ContinuousClock.Instant?, takeCameShort = true
        var inFlight: [Int64: EventDelivery] = [:]
        var ended: [DeliveryOutcome] = [], lookAgain = false
        try await withThrowingTaskGroup(of: Void.self) { group in
            while true {
                let stillTaking = stop?.isRequested != true && taking.map { clock.now - started < $0 } ?? true
                let free = policy.concurrency - inFlight.count + ended.count
                let settling = ended
                async let settled: Void = settle(settling, endpoint: endpoint)
                var taken: [EventDelivery] = []
                let fanOutDue = fannedOutAt.map { since in
                    let waited = clock.now - since
                    return takeCameShort ? waited >= Self.fanOutSpacing : waited >= Self.backlogFanOutSpacing
                } ?? true
                // Taken when places were freed or new events fanned out (the first at the start):
                // not at every wake-up of the group (one per POST, most of them with nothing new).
                if stillTaking, free > 0, !ended.isEmpty || fanOutDue || lookAgain {
                    if fanOutDue {
                        fannedOutAt = clock.now
                        report.added += try await outbox.fanOut(endpoint: endpoint.name, nowMs: now())
                    }
                    let nowMs = now()
                    taken = try await outbox.takeDeliveries(
                        endpoint: endpoint.name, owner: owner, nowMs: nowMs, leaseUntilMs: nowMs + policy.lease.milliseconds, limit: free)
                    takeCameShort = taken.count < free
                }
                try await settled
                metrics?.record(ended, batch: ended.compactMap { inFlight[$0.outboxID] })
                for outcome in ended {
                    inFlight[outcome.outboxID] = nil
                    switch outcome.result {
                    case .delivered: report.delivered += 1
                    case .retry: report.retried += 1
                    case .dead: report.dead += 1
                    }
                }
                // A lease shorter than a slow POST lets its delivery be taken again: not posted twice at once.
                for delivery in taken where inFlight[delivery.outboxID] == nil {
                    inFlight[delivery.outboxID] = delivery
                    group.addTask {
                        let outcome = await self.attempt(delivery, to: endpoint)
                        ending.outcomes.withLock { $0.append(outcome) }
                    }
                }
                if inFlight.isEmpty {
                    // The take beside the settle saw its users' previous events still leased: once
                    // nothing is in flight, one more take finds their next ones before the pass ends.
                    guard stillTaking, !settling.isEmpty else { return }
                    (ended, lookAgain) = ([], true)
                    continue
                }
                lookAgain = false
                try await group.next()
                ended = ending.outcomes.withLock { ending in
                    defer { ending.removeAll(keepingCapacity: true) }
                    return ending
                }
            }
        }
        return report
    }

    private func settle(_ outcomes: [DeliveryOutcome], endpoint: WebhookEndpoint) async throws {
        guard !outcomes.isEmpty else { return }
        try await outbox.settle(outcomes, endpoint: endpoint.name, owner: owner)
    }

    /// The outcomes of POSTs that ended and are not yet recorded, shared with the tasks that post.
    private final class EndedAttempts: Sendable {
        let outcomes = Mutex<[DeliveryOutcome]>([])
    }

    /// How often a pass looks for events written since it began (a store transaction each time).
    static let fanOutSpacing: Duration = .milliseconds(10)

    /// How often a pass fans out while its takes still fill every free place. Fanned out only when
    /// a take came short, a backlog of 20,000 events on PostgreSQL was added in 5 fan-outs (one of
    /// 450 ms, nothing taken meanwhile) and new events waited behind it unseen.
    static let backlogFanOutSpacing: Duration = .milliseconds(100)

    /// One POST and what became of it. Never logs the body, the secret or the endpoint's answer.
    func attempt(_ delivery: EventDelivery, to endpoint: WebhookEndpoint) async -> DeliveryOutcome {
        let sentAtMs = now()
        var request = HTTPClientRequest(url: endpoint.url.absoluteString)
        request.method = .POST
        let timestamp = sentAtMs / 1000
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "user-agent", value: "status-poller")
        request.headers.add(name: "webhook-id", value: delivery.eventID)
        request.headers.add(name: "webhook-timestamp", value: "\(timestamp)")
        request.headers.add(
            name: "webhook-signature", value: WebhookSignature.sign(id: delivery.eventID, timestamp: timestamp, body: delivery.body, secret: endpoint.secret))
        request.body = .bytes(ByteBuffer(string: delivery.body))
        var status: Int?
        var failure: String
        do {
            let response = try await client.client(for: endpoint).execute(request, timeout: .milliseconds(policy.requestTimeout.milliseconds))
            status = Int(response.status.code)
            // Read (to reuse the connection) and dropped: the endpoint's answer is never kept.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            if (200..<300).contains(response.status.code) {
                return DeliveryOutcome(outboxID: delivery.outboxID, result: .delivered, status: status, error: nil, atMs: now())
            }
            failure = (300..<400).contains(response.status.code) ? "HTTP \(response.status.code): redirects are not followed" : "HTTP \(response.status.code)"
        } catch {
            failure = String(client.failure(error, to: endpoint).prefix(300))
        }
        let attempts = delivery.attempts + 1
        let jitter = random.withLock { Double($0.next() >> 11) / Double(1 << 53) }
        let next = now() + policy.delay(afterAttempt: attempts, jitter: jitter).milliseconds
        let dead = next - delivery.queuedAtMs > policy.maximumAge.milliseconds
        logger.warning(
            dead ? "event dead-lettered" : "event delivery failed",
            metadata: ["event.id": "\(delivery.eventID)", "endpoint": "\(endpoint.name)", "attempts": "\(attempts)", "error": "\(failure)"])
        return DeliveryOutcome(outboxID: delivery.outboxID, result: dead ? .dead : .retry(nextAttemptAtMs: next), status: status, error: failure, atMs: now())
    }
}

extension EventDeliverer {
    /// Deletes the events written longer ago than the policy keeps them that no delivery waits for.
    public func prune() async throws -> Int {
        try await outbox.pruneEvents(writtenBeforeMs: now() - policy.keepDelivered.milliseconds)
    }

    /// Delivers until `stop` is requested: a pass (taking new deliveries for at most 5 s, so a
    /// steady stream still lets the housekeeping run), then a wait for `idle` (or a `wakeUp`, such
    /// as PostgreSQL's NOTIFY of new events), again; prunes delivered events once an hour and
    /// updates the backlog gauges. A pass that fails (the store unavailable) is logged and tried
    /// again; deliveries in flight when the stop comes are finished and recorded.
    public func run(until stop: StopSignal, idle: Duration = .milliseconds(250), wakeUp: Doorbell? = nil) async {
        var prunedAtMs: Int64?, countedAtMs: Int64?
        while !stop.isRequested {
            do {
                let report = try await deliverDue(until: stop, taking: .seconds(5))
                if report != DeliveryReport() {
                    logger.debug("delivered events", metadata: [
                        "added": "\(report.added)", "delivered": "\(report.delivered)", "retried": "\(report.retried)", "dead": "\(report.dead)",
                    ])
                }
                let nowMs = now()
                if prunedAtMs.map({ nowMs - $0 >= 3_600_000 }) ?? true {
                    let pruned = try await prune()
                    if pruned > 0 { logger.info("pruned delivered events", metadata: ["events": "\(pruned)"]) }
                    prunedAtMs = nowMs
                }
                if let metrics, countedAtMs.map({ nowMs - $0 >= 5_000 }) ?? true {
                    metrics.update(counts: try await outbox.deliveryCounts())
                    try metrics.flush()
                    countedAtMs = nowMs
                }
            } catch {
                logger.warning("could not deliver events; trying again", metadata: ["error": "\(error)"])
            }
            guard !stop.isRequested else { return }
            // Whichever comes first: the idle time, a wake-up, the stop.
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await Task.sleep(for: idle) }
                group.addTask { await stop.wait() }
                if let wakeUp { group.addTask { await wakeUp.wait() } }
                await group.next()
                group.cancelAll()
            }
        }
    }
}
