import Foundation
import Synchronization

/// A verifyReceipt-compatible App Store over simulated time: a seeded population, a clock the
/// caller moves, and injected faults. It also speaks the App Store Server API from the same
/// population, clock and faults (``answerServerAPI(_:)``). The HTTP layer (`SimulatorServer`) only
/// carries bytes to ``answer(environment:body:)`` and ``answerServerAPI(_:)``.
public final class AppStoreSimulator: Sendable {
    /// The population as Apple's record holds it now: a renewal-date extension rewrites a chain.
    public var population: Population { records.withLock { $0 } }
    let records: Mutex<Population>
    /// The test PKI that signs the Server API's transactions; trust ``SimulatorPKI/rootCertificateDER``.
    public let pki: SimulatorPKI
    /// The In-App Purchase key the Server API expects bearer tokens to be signed with.
    public let serverAPIKey: SimulatedInAppPurchaseKey
    let state: Mutex<State>
    /// The notifications it posts, once ``sendNotifications(version:faults:)`` turned them on.
    let outbox = Mutex<NotificationOutbox?>(nil)
    /// Get Notification History's requests, for the rate a catch-up keeps (`/simulator/arrivals`).
    public let historyArrivals = ArrivalWindow()
    /// Every App Store Server API request (both environments, both endpoints), for the rate that
    /// the workers of one database keep together (`/simulator/arrivals`).
    public let serverAPIArrivals = ArrivalWindow()
    /// Renewal-date extension requests, single and mass.
    let ledger = Mutex(ExtensionLedger())
    /// Send Consumption Information requests taken, and scripted failures to answer first.
    let consumption = Mutex(ConsumptionInbox())
    /// The last reading of Get Notification History: its key, the outbox's size then, its records.
    let historyReading = Mutex<(key: String, count: Int, records: [NotificationOutbox.Record])?>(nil)

    struct State {
        var clockMs: Int64
        var faults: FaultConfiguration
        /// Requests seen per receipt at the current clock: the attempt number of fault draws.
        var attempts: [String: UInt64] = [:]
        var statistics = SimulatorStatistics()
    }

    /// `serverAPIKey` defaults to a fresh key; the signing PKI is always fresh (random per process).
    public init(population: Population, faults: FaultConfiguration = .none, clockMs: Int64? = nil, serverAPIKey: SimulatedInAppPurchaseKey = SimulatedInAppPurchaseKey()) {
        records = Mutex(population)
        self.serverAPIKey = serverAPIKey
        pki = SimulatorPKI.forSimulator(startMs: population.configuration.startMs)
        state = Mutex(State(clockMs: clockMs ?? population.configuration.startMs, faults: faults))
    }

    /// The simulated instant the App Store answers at (ms).
    public var nowMs: Int64 { state.withLock { $0.clockMs } }

    /// Moves the simulated clock; fault draws start again for the new instant.
    public func setClock(_ ms: Int64) {
        state.withLock {
            $0.clockMs = ms
            $0.attempts.removeAll(keepingCapacity: true)
        }
        completeMassExtensions(through: ms)
    }

    public var faults: FaultConfiguration { state.withLock { $0.faults } }
    public func setFaults(_ faults: FaultConfiguration) { state.withLock { $0.faults = faults } }

    /// Counts of what was answered since the start.
    public var statistics: SimulatorStatistics { state.withLock { $0.statistics } }

    /// The enrolment a web service would hold at `ms`: each subscriber's user id and receipt.
    public func enrolment(at ms: Int64) -> [(userID: String, receipt: String)] {
        population.subscribers.map { ($0.userID, $0.receipt(at: ms)) }
    }

    /// Answers one request body sent to `environment`'s endpoint.
    public func answer(environment: SimulatedEnvironment, body: Data) -> SimulatedAnswer {
        let configuration = population.configuration
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            return record(.json(Self.status(21000, environment)), "status_21000")
        }
        guard let receipt = object["receipt-data"] as? String, !receipt.isEmpty, Data(base64Encoded: receipt) != nil else {
            return record(.json(Self.status(21002, environment)), "status_21002")
        }
        let (clock, faults, attempt) = state.withLock { state -> (Int64, FaultConfiguration, UInt64) in
            let key = "\(environment.rawValue)|\(receipt)"
            let attempt = state.attempts[key, default: 0]
            state.attempts[key] = attempt + 1
            return (state.clockMs, state.faults, attempt)
        }
        var random = SeededRandom(seed: configuration.seed ^ 0xFA17_FA17, stableHash(receipt), UInt64(bitPattern: clock), attempt, environment == .sandbox ? 1 : 0)
        let latency = faults.latency.sample(&random)
        if faults.outages.contains(where: { $0.contains(clock) }) {
            // Apple's 2020 outage: first 5xx, then 200s with an HTML page.
            let reply: SimulatedAnswer.Reply = attempt % 2 == 0 ? .http(503, body: "Service Unavailable", headers: [:]) : .html
            return record(SimulatedAnswer(reply: reply, delay: latency), "outage")
        }
        if let fault = faults.fault(draw: Double.random(in: 0..<1, using: &random)) {
            return record(injected(fault, faults, environment, latency, &random), "fault_\(fault.rawValue)")
        }
        guard let token = ReceiptToken(encoded: receipt), population.subscribers.indices.contains(token.subscriberIndex) else {
            return record(SimulatedAnswer(reply: .json(Self.status(21003, environment)), delay: latency), "status_21003")
        }
        let subscriber = population.subscribers[token.subscriberIndex]
        if subscriber.environment == "Sandbox", environment == .production {
            return record(SimulatedAnswer(reply: .json(Self.status(21007, environment)), delay: latency), "status_21007")
        }
        if subscriber.environment == "Production", environment == .sandbox {
            return record(SimulatedAnswer(reply: .json(Self.status(21008, environment)), delay: latency), "status_21008")
        }
        guard object["password"] as? String == configuration.sharedSecret else {
            return record(SimulatedAnswer(reply: .json(Self.status(21004, environment)), delay: latency), "status_21004")
        }
        let exclude = (object["exclude-old-transactions"] as? Bool) ?? false
        let json = ResponseBuilder.valid(subscriber, at: clock, bundleID: configuration.bundleID, excludeOldTransactions: exclude)
        return record(SimulatedAnswer(reply: .json(Self.serialize(json)), delay: latency), "status_0")
    }

    private func injected(_ fault: FaultConfiguration.Fault, _ faults: FaultConfiguration, _ environment: SimulatedEnvironment, _ latency: Duration, _ random: inout SeededRandom) -> SimulatedAnswer {
        switch fault {
        case .droppedConnection: return SimulatedAnswer(reply: .drop, delay: latency)
        case .serviceUnavailable: return SimulatedAnswer(reply: .http(503, body: "Service Unavailable", headers: [:]), delay: latency)
        case .rateLimited:
            return SimulatedAnswer(reply: .http(429, body: "Too Many Requests", headers: ["Retry-After": String(faults.retryAfterSeconds)]), delay: latency)
        case .htmlPage: return SimulatedAnswer(reply: .html, delay: latency)
        case .receiptServerUnavailable: return SimulatedAnswer(reply: .json(Self.status(21005, environment)), delay: latency)
        case .internalDataAccess: return SimulatedAnswer(reply: .json(Self.status(21009, environment)), delay: latency)
        case .retryableInternalError, .finalInternalError:
            let code = Int.random(in: 21100...21199, using: &random)
            // Apple has spelled the flag both ways, as a boolean and as 0/1.
            let key = random.chance(0.5) ? "is-retryable" : "is_retryable"
            let retryable = fault == .retryableInternalError
            let value: Any = random.chance(0.5) ? retryable : (retryable ? 1 : 0)
            return SimulatedAnswer(reply: .json(Self.serialize(["status": code, "environment": environment.rawValue, key: value])), delay: latency)
        case .slowAnswer:
            return SimulatedAnswer(reply: .json(Self.status(21005, environment)), delay: faults.slowAnswerDelay + latency)
        }
    }

    private func record(_ answer: SimulatedAnswer, _ outcome: String) -> SimulatedAnswer {
        state.withLock {
            $0.statistics.requests += 1
            $0.statistics.outcomes[outcome, default: 0] += 1
        }
        var answer = answer
        answer.outcome = outcome
        return answer
    }

    private func record(_ reply: SimulatedAnswer.Reply, _ outcome: String) -> SimulatedAnswer {
        record(SimulatedAnswer(reply: reply, delay: .zero), outcome)
    }

    static func status(_ code: Int, _ environment: SimulatedEnvironment) -> Data {
        serialize(["status": code, "environment": environment.rawValue])
    }

    static func serialize(_ object: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data(#"{"status":21000}"#.utf8)
    }
}
