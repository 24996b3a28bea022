import Foundation

/// What the simulated App Store has to post to the app's notification URL, and every attempt it
/// made: a notification per lifecycle event, due at the event's instant, retried on Apple's
/// schedule until a 200 (V2: 1, 12, 24, 48, 72 h after the previous attempt; V1: 6, 24, 48 h;
/// sandbox: one attempt). Its records answer Get Notification History and the test notification
/// status. It only schedules; ``NotificationPusher`` posts.
public struct NotificationOutbox: Sendable {
    /// One notification and its attempts.
    public struct Record: Sendable {
        /// `notificationUUID` (V1 has none; the simulator names it alike for its own bookkeeping).
        public var id: String
        public var version: Int
        /// The lifecycle event it tells; nil for `TEST`.
        public var event: LifecycleEvent?
        public var body: Data
        /// V2: the JWS inside ``body``, as Get Notification History lists it ("" for V1).
        public var signedPayload = ""
        /// When Apple first tried (the event's instant, or later when delayed).
        public var firstAttemptMs: Int64
        public var attempts: [SendAttempt] = []
        /// The next try, nil once delivered or out of retries.
        public var nextAttemptMs: Int64?
        var retriesLeft: [Int64]
        public var delivered: Bool { attempts.contains { $0.result == .success } }
    }

    /// One due try: post `body` unless `lost`; a `duplicated` one is recorded as timed out even
    /// when the receiver took it.
    public struct Attempt: Sendable {
        public var id: String
        public var atMs: Int64
        public var body: Data
        public var lost: Bool
        public var duplicated: Bool
    }

    public static let version2Retries: [Int64] = [1, 12, 24, 48, 72].map { $0 * 3_600_000 }
    public static let version1Retries: [Int64] = [6, 24, 48].map { $0 * 3_600_000 }

    public let version: Int
    public let faults: NotificationFaults
    public private(set) var records: [Record] = []
    private var index: [String: Int] = [:]
    /// Records with a try still to come, latest try first, so the next one is at the end.
    private var pending: [(atMs: Int64, record: Int)] = []
    /// Events up to this instant are in ``records``.
    private var generatedThrough: Int64

    init(version: Int, faults: NotificationFaults, from ms: Int64) {
        self.version = version
        self.faults = faults
        generatedThrough = ms
    }

    /// The earliest try due at or before `ms` (events up to `ms` are scheduled first), nil when none is.
    mutating func nextAttempt(through ms: Int64, population: Population, pki: SimulatorPKI) -> Attempt? {
        if ms > generatedThrough {
            for event in population.lifecycleEvents(after: generatedThrough, through: ms) { schedule(event, population: population, pki: pki) }
            generatedThrough = ms
        }
        guard let (at, next) = pending.last, at <= ms else { return nil }
        let record = records[next]
        var random = SeededRandom(seed: population.configuration.seed ^ 0x0070_5157, stableHash(record.id), UInt64(record.attempts.count))
        return Attempt(id: record.id, atMs: at, body: record.body, lost: random.chance(faults.lost), duplicated: random.chance(faults.duplicated))
    }

    /// What became of `attempt`: the next try is scheduled unless it succeeded or none is left.
    mutating func record(_ attempt: Attempt, result: SendAttempt.Result) {
        guard let position = index[attempt.id], let due = pending.lastIndex(where: { $0.record == position }) else { return }
        pending.remove(at: due)
        records[position].attempts.append(SendAttempt(atMs: attempt.atMs, result: result))
        if result == .success || records[position].retriesLeft.isEmpty {
            records[position].nextAttemptMs = nil
        } else {
            let next = attempt.atMs + records[position].retriesLeft.removeFirst()
            records[position].nextAttemptMs = next
            schedule(position, at: next)
        }
    }

    /// Keeps ``pending`` latest first; ties in the order they were scheduled.
    private mutating func schedule(_ position: Int, at ms: Int64) {
        var low = 0, high = pending.count
        while low < high {
            let middle = (low + high) / 2
            if (pending[middle].atMs, -pending[middle].record) > (ms, -position) { low = middle + 1 } else { high = middle }
        }
        pending.insert((ms, position), at: low)
    }

    /// A `TEST` notification, due at `ms`; returns its id (the test notification token).
    mutating func scheduleTest(at ms: Int64, environment: String, configuration: PopulationConfiguration, pki: SimulatorPKI) -> String {
        let id = Self.uuid(seed: configuration.seed, "TEST", ms, UInt64(records.count))
        let signed = NotificationBuilder.test(uuid: id, atMs: ms, environment: environment, configuration: configuration, pki: pki)
        add(Record(
            id: id, version: 2, event: nil, body: NotificationBuilder.body(signed), signedPayload: signed, firstAttemptMs: ms, nextAttemptMs: ms, retriesLeft: []))
        return id
    }

    /// A `RENEWAL_EXTENSION/SUMMARY` of a completed mass extension, due at `ms`.
    mutating func scheduleSummary(_ summary: [String: Any], at ms: Int64, configuration: PopulationConfiguration, pki: SimulatorPKI) {
        guard version == 2 else { return }
        let id = Self.uuid(seed: configuration.seed, "SUMMARY|\(summary["requestIdentifier"] ?? "")", ms, 0)
        let signed = NotificationBuilder.summary(summary, uuid: id, atMs: ms, pki: pki)
        let retries = summary["environment"] as? String == "Sandbox" ? [] : Self.version2Retries
        add(Record(
            id: id, version: 2, event: nil, body: NotificationBuilder.body(signed), signedPayload: signed, firstAttemptMs: ms, nextAttemptMs: ms, retriesLeft: retries))
    }

    /// An event that happened at the clock (an extension Apple granted on request), which the
    /// events read from the chains may have passed already; scheduled once whichever comes first.
    mutating func scheduleNow(_ event: LifecycleEvent, population: Population, pki: SimulatorPKI) {
        schedule(event, population: population, pki: pki)
    }

    public func record(id: String) -> Record? { index[id].map { records[$0] } }

    private mutating func schedule(_ event: LifecycleEvent, population: Population, pki: SimulatorPKI) {
        let environment = population.subscribers[event.subscriberIndex].environment
        let retries = environment == "Sandbox" ? [] : (version == 1 ? Self.version1Retries : Self.version2Retries)
        let id = Self.uuid(seed: population.configuration.seed, event.originalTransactionID, event.atMs, UInt64(LifecycleEvent.Kind.allCases.firstIndex(of: event.kind)!))
        let body: Data
        var signed = ""
        if version == 1 {
            guard let type = event.version1 else { return }
            body = NotificationBuilder.version1(event, type: type, population: population)
        } else {
            signed = NotificationBuilder.version2(event, uuid: id, population: population, pki: pki)
            body = NotificationBuilder.body(signed)
        }
        var random = SeededRandom(seed: population.configuration.seed ^ 0xDE1A_7ED, stableHash(id))
        let delay = random.chance(faults.delayed) ? random.time(in: 1...max(1, faults.maxDelayMs)) : 0
        add(Record(
            id: id, version: version, event: event, body: body, signedPayload: signed, firstAttemptMs: event.atMs + delay, nextAttemptMs: event.atMs + delay,
            retriesLeft: retries))
    }

    private mutating func add(_ record: Record) {
        guard index[record.id] == nil else { return }
        index[record.id] = records.count
        records.append(record)
        if let at = record.nextAttemptMs { schedule(records.count - 1, at: at) }
    }

    /// A UUID drawn from the seed and what it names, so a seed replays the same ids.
    static func uuid(seed: UInt64, _ name: String, _ ms: Int64, _ salt: UInt64) -> String {
        var random = SeededRandom(seed: seed ^ 0x0000_0000_1D1D, stableHash(name), UInt64(bitPattern: ms), salt)
        let bytes = (0..<2).flatMap { _ in withUnsafeBytes(of: random.next().bigEndian, Array.init) }
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), "4" + hex.dropFirst(13).prefix(3), "a" + hex.dropFirst(17).prefix(3), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }
}
