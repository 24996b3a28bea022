import AppStoreSimulator
import Foundation
import GRDB
import Logging
import NIOCore
import Testing

@testable import SQLiteStore
@testable import StatusPolling

/// Issue 11, "Bad responses": thousands of generated answers — truncated, mistyped, oversized,
/// nested too deep, with NaN and odd encodings, and mutations of the stored fixtures — each of which
/// the client must either read as Apple meant it or refuse for a named reason, changing nothing.
///
/// What each answer must become is decided by the generator from Apple's documented shapes (strings
/// for numbers and booleans, 0/1 flags, a single object for an array, unknown keys ignored), never
/// by asking the decoder: an answer that is read must read exactly like a well-formed reference body
/// (the same decision for the same row). Every case draws from a generator of its own, derived from
/// an injectable seed (`STATUS_POLLER_FUZZ_SEED`); nothing depends on the clock.
@Suite struct ResponseFuzzTests {
    /// Fixed, so every run asks the same questions; `STATUS_POLLER_FUZZ_SEED` (decimal or 0x…)
    /// replays another seed.
    static let seed: UInt64 = {
        let fallback: UInt64 = 0x11_BAD_5EED
        guard let text = ProcessInfo.processInfo.environment["STATUS_POLLER_FUZZ_SEED"] else { return fallback }
        return (text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)) ?? fallback
    }()

    /// The run's clock in the loopback test: day 29 of the first month, as in `PollRunTests`.
    static let now = AppleJSON.t0 + 29 * AppleJSON.day + 12 * AppleJSON.hour
    /// The loopback client reads at most this much; a larger answer is refused.
    static let maxResponseBytes = 1 << 20

    // MARK: - In process: decoding and the decision

    @Test(.timeLimit(.minutes(10)), arguments: [seed])
    func everyAnswerIsReadAsAppleMeantOrRefusedForAReason(seed: UInt64) throws {
        let bases = try Self.bases(seed: seed)
        var actual: [Category: [String: Int]] = [:]
        var wanted: [Category: [String: Int]] = [:]
        var refusals: Set<VerificationFailure.Reason> = []
        var mismatches: [String] = []
        var generated = 0
        for category in Category.allCases {
            for index in 0..<category.inProcessCount {
                var rng = SeededRandom(seed: seed, category.stream, UInt64(index))
                let fuzz = Self.generate(category, from: bases, rng: &rng)
                generated += 1
                let reading = Self.read(fuzz.body, row: fuzz.row)
                let (label, problem) = Self.check(reading, against: fuzz.expected, row: fuzz.row)
                actual[category, default: [:]][reading.label, default: 0] += 1
                wanted[category, default: [:]][label, default: 0] += 1
                if case .failed(let reason, _) = reading { refusals.insert(reason) }
                if let problem {
                    mismatches.append("\(category) #\(index) on \(fuzz.baseName), \(fuzz.note): \(problem)")
                }
            }
        }
        #expect(generated == 10_000)
        #expect(mismatches.isEmpty, "seed \(seed): \(mismatches.count) of \(generated) answers misread:\n\(mismatches.prefix(15).joined(separator: "\n"))")
        #expect(actual == wanted, "seed \(seed)")
        // Whatever the seed, a body cut short is never read.
        #expect(actual[.truncated] == ["not_json": Category.truncated.inProcessCount])
        // Reading refuses an answer for exactly two reasons: not JSON (a passing outage page or a
        // cut connection: transient), or JSON of another shape (asking again gets the same: permanent).
        #expect(refusals == [.notJSON, .unexpectedResponse])
    }

    /// Invalid UTF-8 inside a string was read with U+FFFD in place of the bad bytes, so a corrupted
    /// body was taken for a valid answer: a new row adopted a chain id that exists nowhere, and a
    /// mangled `latest_receipt` would have been stored and replayed every night after.
    @Test func invalidUTF8InsideAStringIsNotJSON() throws {
        let valid = AppleJSON.valid(transactions: [AppleJSON.Transaction()], renewals: [AppleJSON.Renewal()])
        for (needle, replacement) in [("1000000001", [0x31, 0x30, 0xFF, 0x30]), ("UPDATED-RECEIPT", [0x55, 0xC3, 0x28]), ("premium.monthly", [0xED, 0xA0, 0x80])] as [(String, [UInt8])] {
            let body = Self.replacing(Array(needle.utf8), in: Array(valid.utf8), with: replacement)
            #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(body) }
            guard case .transient(let failure, _) = VerifyReceiptClient.decode(ByteBuffer(bytes: body), environment: .production, httpStatus: 200) else {
                Issue.record("invalid UTF-8 in \(needle) must be a transient failure"); continue
            }
            #expect(failure.reason == .notJSON)
        }
        // Valid multi-byte text, escaped or raw, still reads.
        let text = try JSONValue.parse(Array(#"["é€😀", "\u00e9\ud83d\ude00", ""#.utf8) + [0xEF, 0xBF, 0xBF] + Array(#""]"#.utf8))
        #expect(text == .array([.string("é€😀"), .string("é😀"), .string("\u{FFFF}")]))
    }

    // MARK: - Through the real run: HTTP on loopback, PollRun, SQLite

    @Test(.timeLimit(.minutes(10)), arguments: [seed])
    func failedAnswersLeaveEveryEntitlementColumnAsItWas(seed: UInt64) async throws {
        let rows = 1_500
        let plans = try Self.loopbackPlans(rows: rows, seed: seed)
        let refused = plans.filter { $0.wanted.isFailure }
        let notJSON = refused.filter { $0.wanted == .failed(.notJSON, transient: true) }.count
        try await withTemporaryDatabase { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                try Self.insert(plans, into: db)
                for plan in plans { await server.script(plan.row.latestReceipt, [.json(plan.body)]) }
                let before = try Self.columns(db)
                let report = try await Self.poll(db, production, sandbox)

                #expect(report.aborted == nil)
                #expect(report.interrupted == false)
                #expect(report.selected == rows)
                #expect(report.failed == refused.count)
                #expect(report.failedByReason == Dictionary(grouping: refused, by: { $0.wanted.reason! }).mapValues(\.count))
                #expect(report.verified == rows - refused.count)
                // Not JSON is worth one more try; JSON of the wrong shape is not.
                #expect(report.requests == rows + notJSON)
                #expect(report.retries == notJSON)

                let problems = try await Self.problems(plans, before: before, after: try Self.columns(db), in: db)
                #expect(problems.isEmpty, "seed \(seed): \(problems.count) rows:\n\(problems.prefix(15).joined(separator: "\n"))")
            }
        }
    }

    /// The rows as a web service (and earlier runs) left them, in one transaction.
    static func insert(_ plans: [LoopbackPlan], into db: TemporaryDatabase) throws {
        try db.webService.write { d in
            for plan in plans {
                let s = plan.row.state
                try d.execute(literal: """
                    INSERT INTO subscriptions (id, user_id, latest_receipt, original_transaction_id, product_id, environment,
                        expires_at, grace_period_expires_at, is_in_billing_retry, auto_renew_status, auto_renew_product_id,
                        expiration_intent, cancelled_at)
                    VALUES (\(plan.row.id), \(plan.row.userID), \(plan.row.latestReceipt), \(s.originalTransactionID), \(s.productID),
                        \(s.environment), \(s.expiresAt), \(s.gracePeriodExpiresAt), \(s.isInBillingRetry), \(s.autoRenewStatus),
                        \(s.autoRenewProductID), \(s.expirationIntent), \(s.cancelledAt))
                    """)
            }
        }
    }

    /// One real run: request timeouts far above any loopback stall, two attempts, the breaker off.
    static func poll(_ db: TemporaryDatabase, _ production: String, _ sandbox: String) async throws -> RunReport {
        let configuration = VerifyReceiptClientTests.configuration(production, sandbox, attempts: 2, timeout: .seconds(30))
        let http = KeepAliveHTTPClient.Configuration(connectTimeout: .seconds(30), maxResponseBytes: maxResponseBytes)
        let logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }
        return try await VerifyReceiptClient.withClient(configuration, http: http, jitter: { 0.5 }) { client in
            // A stretch of outage pages is the point here, not a reason to stop.
            let run = PollRun(
                configuration: .init(bundleID: AppleJSON.bundleID, nowMs: now, concurrency: 8, circuitBreaker: nil),
                store: db.store, source: client, logger: logger)
            return await run.run()
        }
    }

    /// Rows that did not end as planned: a refused answer must leave every entitlement column and
    /// the stored receipt byte for byte as they were, and record its reason; an accepted one must
    /// hold exactly the decided state.
    static func problems(_ plans: [LoopbackPlan], before: [Int64: [String]], after: [Int64: [String]], in db: TemporaryDatabase) async throws -> [String] {
        let reasons: [Int64: String?] = try await db.webService.read { d in
            let rows = try Row.fetchAll(d, sql: "SELECT id, last_error_reason FROM subscriptions")
            return Dictionary(uniqueKeysWithValues: rows.map { ($0["id"] as Int64, $0["last_error_reason"] as String?) })
        }
        var problems: [String] = []
        for plan in plans {
            let id = plan.row.id
            switch plan.wanted {
            case .failed(let reason, _):
                if after[id] != before[id] { problems.append("row \(id) (\(plan.note)) changed on \(reason.rawValue): \(before[id] ?? []) → \(after[id] ?? [])") }
                if reasons[id] != .some(reason.rawValue) { problems.append("row \(id) (\(plan.note)) failed as \(String(describing: reasons[id])), not \(reason.rawValue)") }
            case .decided(let outcome):
                guard let (state, receipt) = adoption(outcome) else {
                    problems.append("row \(id): planned \(outcome)")
                    continue
                }
                let stored = try await db.store.subscription(id: id)
                if stored?.state != state || stored?.latestReceipt != (receipt ?? plan.row.latestReceipt) {
                    problems.append("row \(id) (\(plan.note)) holds \(String(describing: stored)), not \(state)")
                }
            default:
                problems.append("row \(id): no plan for \(plan.wanted)")
            }
        }
        return problems
    }
}

// MARK: - What an answer must become, and what it became

extension ResponseFuzzTests {
    /// The kinds of bad answer, and how many of each are read in process.
    enum Category: String, CaseIterable, Sendable {
        case truncated, wrongType, missingOrNullArray, hugeBody, deepNesting, nonNumericString, otherDateForm
        case duplicateKey, nanLike, utf8Oddity, fixtureMutation

        var inProcessCount: Int {
            switch self {
            case .truncated: 1_000
            case .wrongType: 1_500
            case .missingOrNullArray: 600
            case .hugeBody: 40
            case .deepNesting: 610
            case .nonNumericString: 1_000
            case .otherDateForm: 700
            case .duplicateKey: 900
            case .nanLike: 900
            case .utf8Oddity: 1_250
            case .fixtureMutation: 1_500
            }
        }

        /// Separates the categories' random streams.
        var stream: UInt64 { UInt64(Self.allCases.firstIndex(of: self)!) + 1 }
    }

    /// What the client must make of an answer, decided by the generator.
    enum Expected: Sendable, Equatable {
        /// Refused as not JSON, a failure that may pass.
        case notJSON
        /// Refused as JSON of another shape, a failure that stays.
        case unexpectedResponse
        /// Read, and decided exactly as this well-formed body is decided for the same row.
        case like([UInt8])
        /// Read, and refused by the decision for this reason.
        case rejected(VerificationFailure.Reason)
    }

    /// How the client, then the decision, took one answer.
    enum Reading: Equatable, Sendable {
        case failed(VerificationFailure.Reason, transient: Bool)
        case appleStatus(Int, isRetryable: Bool?)
        case decided(EntitlementDecision.Outcome)

        var label: String {
            switch self {
            case .failed(let reason, _): reason.rawValue
            case .appleStatus(let code, _): "apple_status:\(code)"
            case .decided(.adopt): "adopt"
            case .decided(.reject(let failure)): "reject:\(failure.reason.rawValue)"
            }
        }

        var isFailure: Bool { if case .failed = self { true } else { false } }
        var reason: VerificationFailure.Reason? { if case .failed(let reason, _) = self { reason } else { nil } }
    }

    /// One generated answer, the row it is asked for, and what must come of it.
    struct Case {
        var baseName: String
        var row: SubscriptionRow
        var body: [UInt8]
        var expected: Expected
        var note: String
    }

    /// The state and receipt an adoption writes.
    static func adoption(_ outcome: EntitlementDecision.Outcome) -> (state: SubscriptionState, latestReceipt: String?)? {
        guard case .adopt(let state, let receipt, _) = outcome else { return nil }
        return (state, receipt)
    }

    /// Decodes and classifies `body` as the client does with a 200, then decides on it.
    static func read(_ body: [UInt8], row: SubscriptionRow) -> Reading {
        switch VerifyReceiptClient.decode(ByteBuffer(bytes: body), environment: .production, httpStatus: 200) {
        case .transient(let failure, _): return .failed(failure.reason, transient: true)
        case .permanent(let failure): return .failed(failure.reason, transient: false)
        case .answer(let response):
            guard response.status.carriesReceipt else { return .appleStatus(response.status.rawValue, isRetryable: response.isRetryable) }
            return .decided(EntitlementDecision.decide(answer: response.statusAnswer, row: row, bundleID: AppleJSON.bundleID))
        }
    }

    /// The label the expectation stands for, and what is wrong with `reading`, if anything.
    static func check(_ reading: Reading, against expected: Expected, row: SubscriptionRow) -> (label: String, problem: String?) {
        if case .decided(let outcome) = reading, let state = adoption(outcome)?.state, state.originalTransactionID?.isEmpty != false || state.expiresAt == nil {
            return ("adopt", "adopted a state without a chain or an expiry: \(state)")
        }
        switch expected {
        case .notJSON:
            return ("not_json", reading == .failed(.notJSON, transient: true) ? nil : "expected not_json, got \(reading)")
        case .unexpectedResponse:
            return ("unexpected_response", reading == .failed(.unexpectedResponse, transient: false) ? nil : "expected unexpected_response, got \(reading)")
        case .rejected(let reason):
            let label = "reject:\(reason.rawValue)"
            return (label, reading.label == label ? nil : "expected \(label), got \(reading)")
        case .like(let reference):
            let wanted = read(reference, row: row)
            if wanted.isFailure { return (wanted.label, "the reference body is refused (\(wanted)): \(String(decoding: reference.prefix(300), as: UTF8.self))") }
            return (wanted.label, reading == wanted ? nil : "expected \(wanted), got \(reading)")
        }
    }
}

// MARK: - The answers mutated

extension ResponseFuzzTests {
    /// A well-formed answer the mutations start from.
    struct Base: Sendable {
        var name: String
        var bytes: [UInt8]
        var tree: JSONValue
        var isFixture: Bool
        /// `status` 0 and the app's `bundle_id`: the decision is reached.
        var reachesDecision: Bool
        var chainIDs: [String]
        /// `tree` written plainly, and its members: worked out once, used by every case.
        var rendered: [UInt8]
        var members: [Member]
    }

    /// Where a member sits, which decides whether and how the client reads it.
    enum Place { case top, receipt, transaction, renewal, elsewhere }

    /// How the client reads a member's value.
    enum Kind: Equatable { case status, string, int64, bool, object, objects, ignored }

    /// One member of an object in an answer.
    struct Member {
        var path: [Int]
        var key: String
        var value: JSONValue
        var kind: Kind
        /// The depth of the object holding it (the document is 1).
        var depth: Int
    }

    /// A generated body and what must come of it.
    typealias Generated = (body: [UInt8], expected: Expected, note: String)

    static let fixtureNames = [
        "renewal-production.json", "grace-period-single-object.json", "internal-error-is_retryable.json", "internal-error-is-retryable-false.json",
    ]

    /// The stored fixtures, and Apple-shaped answers made for this seed.
    static func bases(seed: UInt64) throws -> [Base] {
        var bases = try fixtureNames.map { try base($0, bytes: Array(Fixture.data($0)), isFixture: true) }
        for index in 0..<40 {
            var rng = SeededRandom(seed: seed, 99, UInt64(index))
            bases.append(try base("generated-\(index)", bytes: Array(generatedAnswer(&rng).utf8), isFixture: false))
        }
        return bases
    }

    static func base(_ name: String, bytes: [UInt8], isFixture: Bool) throws -> Base {
        let tree = try JSONValue.parse(bytes)
        // The trees the mutations start from agree with Foundation's independent reader.
        try #require(JSONValueTests.same(tree, try JSONSerialization.jsonObject(with: Data(bytes))), "\(name)")
        let reaches = tree.member("status") == .number("0") && tree.member("receipt")?.member("bundle_id") == .string(AppleJSON.bundleID)
        let entries: [JSONValue]
        switch tree.member("latest_receipt_info") {
        case .array(let elements)?: entries = elements
        case .object(let single)?: entries = [.object(single)]
        default: entries = []
        }
        let chains = entries.compactMap { entry -> String? in
            if case .string(let id)? = entry.member("original_transaction_id"), entry.member("expires_date_ms") != nil { return id }
            return nil
        }
        return Base(
            name: name, bytes: bytes, tree: tree, isFixture: isFixture, reachesDecision: reaches, chainIDs: Array(Set(chains)).sorted(),
            rendered: tree.rendered, members: members(of: tree))
    }

    /// An answer of one to three subscriptions with their renewals, built the way Apple writes it.
    static func generatedAnswer(_ rng: inout SeededRandom) -> String {
        let (t0, day) = (AppleJSON.t0, AppleJSON.day)
        var transactions: [AppleJSON.Transaction] = []
        var renewals: [AppleJSON.Renewal] = []
        for chain in 0..<Int.random(in: 1...3, using: &rng) {
            let otid = "47\(Int.random(in: 10_000_000...99_999_999, using: &rng))\(chain)"
            let product = ["premium.monthly", "premium.yearly", "storage.monthly"].randomElement(using: &rng)!
            let periods = Int.random(in: 1...4, using: &rng)
            for period in 0..<periods {
                var t = AppleJSON.Transaction()
                t.productID = product
                t.originalTransactionID = otid
                t.transactionID = "\(otid)\(period)"
                t.purchaseMs = t0 + Int64(period) * 30 * day
                t.expiresMs = t0 + Int64(period + 1) * 30 * day
                if rng.chance(0.08) { t.cancellationMs = t.purchaseMs + 5 * day }
                if rng.chance(0.05) { t.isUpgraded = true }
                transactions.append(t)
            }
            if rng.chance(0.85) {
                var r = AppleJSON.Renewal()
                r.originalTransactionID = otid
                r.productID = product
                r.autoRenewProductID = product
                r.autoRenewStatus = rng.chance(0.7) ? "1" : "0"
                if rng.chance(0.3) { r.expirationIntent = String(Int.random(in: 1...5, using: &rng)) }
                if rng.chance(0.3) { r.isInBillingRetry = rng.chance(0.5) ? "1" : "0" }
                if rng.chance(0.2) { r.graceEndsMs = t0 + Int64(periods) * 30 * day + 16 * day }
                renewals.append(r)
            }
        }
        if rng.chance(0.2) {
            var coins = AppleJSON.Transaction()
            coins.productID = "coins.100"
            coins.originalTransactionID = "48\(Int.random(in: 10_000_000...99_999_999, using: &rng))"
            coins.transactionID = coins.originalTransactionID
            coins.expiresMs = nil
            transactions.append(coins)
        }
        transactions.shuffle(using: &rng)
        return AppleJSON.valid(
            environment: rng.chance(0.8) ? "Production" : "Sandbox", latestReceipt: rng.chance(0.9) ? "MIIT\(rng.next() % 1_000_000)" : nil,
            transactions: transactions, renewals: renewals)
    }

    /// A row that is new, owns one of the answer's chains, or owns a chain the answer does not hold.
    static func row(for base: Base, rng: inout SeededRandom) -> SubscriptionRow {
        var state = SubscriptionState.unverified
        let roll = Double.random(in: 0..<1, using: &rng)
        if roll >= 0.4 {
            let owned = roll < 0.85 ? base.chainIDs.randomElement(using: &rng) : nil
            state = SubscriptionState(
                originalTransactionID: owned ?? "1999999999", productID: "premium.monthly", environment: "Production",
                expiresAt: AppleJSON.t0, autoRenewStatus: true, autoRenewProductID: "premium.monthly")
        }
        return SubscriptionRow(id: 1, userID: "user-1", latestReceipt: "OLD-RECEIPT", state: state)
    }

    static func generate(_ category: Category, from bases: [Base], rng: inout SeededRandom) -> Case {
        let candidates = category == .fixtureMutation ? bases.filter(\.isFixture) : bases
        let base = candidates.randomElement(using: &rng)!
        let row = row(for: base, rng: &rng)
        let generated = mutate(base, category, row: row, rng: &rng)
        return Case(baseName: base.name, row: row, body: generated.body, expected: generated.expected, note: generated.note)
    }

    static func mutate(_ base: Base, _ category: Category, row: SubscriptionRow, rng: inout SeededRandom) -> Generated {
        switch category {
        case .truncated: truncated(base, &rng)
        case .wrongType: wrongType(base, &rng)
        case .missingOrNullArray: missingOrNullArray(base, row, &rng)
        case .hugeBody: hugeBody(base, &rng)
        case .deepNesting: deepNesting(base, &rng)
        case .nonNumericString: nonNumericString(base, &rng)
        case .otherDateForm: otherDateForm(base, &rng)
        case .duplicateKey: duplicateKey(base, &rng)
        case .nanLike: nanLike(base, &rng)
        case .utf8Oddity: utf8Oddity(base, &rng)
        case .fixtureMutation: fixtureMutation(base, &rng)
        }
    }

    /// Cut before the closing brace: no prefix of an object is a whole document.
    static func truncated(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let full: [UInt8]
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: full = base.bytes
        case 1: full = base.tree.rendered
        default: full = base.tree.rendered(whitespace: &rng)
        }
        let close = full.lastIndex(of: UInt8(ascii: "}"))!
        let cut = Int.random(in: 0..<close, using: &rng)
        return (Array(full[..<cut]), .notJSON, "cut at \(cut) of \(full.count)")
    }

    /// A value of a type the member is never sent as; an ignored member may hold anything.
    static func wrongType(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let members = base.members
        let read = members.filter { $0.kind != .ignored }
        if !read.isEmpty, rng.chance(0.8) {
            let member = read.randomElement(using: &rng)!
            let roll = Double.random(in: 0..<1, using: &rng)
            let pool: Pool = roll < 0.7 ? .refused : roll < 0.85 ? .absent : .equivalent
            return substitution(member, in: base, from: pool, &rng) ?? substitution(member, in: base, from: .refused, &rng)!
        }
        let text = anyValues.randomElement(using: &rng)!
        guard let member = members.filter({ $0.kind == .ignored }).randomElement(using: &rng) else {
            return (adding("x_fuzz", raw: Array(text.utf8), to: base.tree), .like(base.rendered), "x_fuzz: \(text) added")
        }
        return (splice(base.tree, at: member.path, raw: Array(text.utf8)), .like(base.rendered), "ignored \(member.key) = \(text)")
    }

    /// A missing or null array reads as empty; a single object as a one-element array.
    static func missingOrNullArray(_ base: Base, _ row: SubscriptionRow, _ rng: inout SeededRandom) -> Generated {
        let names = ["latest_receipt_info", "pending_renewal_info", "receipt"]
        let candidates = base.members.filter { ($0.path.count == 1 && names.contains($0.key)) || $0.key == "in_app" }
        guard let member = candidates.randomElement(using: &rng) else {
            let key = ["latest_receipt_info", "pending_renewal_info"].randomElement(using: &rng)!
            let text = ["null", "[]"].randomElement(using: &rng)!
            return (adding(key, raw: Array(text.utf8), to: base.tree), .like(base.rendered), "\(key): \(text) added")
        }
        let removed = base.tree.removing(at: member.path).rendered
        let variant = Int.random(in: 0..<4, using: &rng)
        let body: [UInt8]
        let note: String
        switch variant {
        case 0: (body, note) = (removed, "\(member.key) removed")
        case 1: (body, note) = (splice(base.tree, at: member.path, raw: Array("null".utf8)), "\(member.key) null")
        case 2: (body, note) = (splice(base.tree, at: member.path, raw: Array("[]".utf8)), "\(member.key) []")
        default:
            switch member.value {
            case .array(let elements) where elements.count == 1:
                (body, note) = (splice(base.tree, at: member.path, raw: elements[0].rendered), "\(member.key) as its single object")
            case .object:
                (body, note) = (splice(base.tree, at: member.path, raw: Array("[".utf8) + member.value.rendered + Array("]".utf8)), "\(member.key) wrapped in an array")
            case .array(let elements) where elements.isEmpty:
                (body, note) = (splice(base.tree, at: member.path, raw: Array("[null]".utf8)), "\(member.key) with a null entry")
            default:
                (body, note) = (splice(base.tree, at: member.path, raw: Array(member.value.rendered.dropLast()) + Array(", null]".utf8)), "\(member.key) with a null entry")
            }
        }
        let expected: Expected
        switch (member.key, variant) {
        case ("in_app", _): expected = .like(base.rendered)
        case ("receipt", 2), ("receipt", 3): expected = .unexpectedResponse
        case ("receipt", _): expected = base.reachesDecision ? .rejected(.bundleMismatch) : .like(removed)
        case (_, 3): expected = note.hasSuffix("null entry") ? .unexpectedResponse : .like(base.rendered)
        case ("latest_receipt_info", _) where base.reachesDecision:
            expected = .rejected(row.state.originalTransactionID == nil ? .noSubscriptionInReceipt : .chainNotInReceipt)
        default: expected = .like(removed)
        }
        return (body, expected, note)
    }

    /// Hundreds of kilobytes: padding Apple might add, a long history, whitespace, or garbage.
    static func hugeBody(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let size = Int.random(in: 100_000...400_000, using: &rng)
        switch Int.random(in: 0..<6, using: &rng) {
        case 0:
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
            let text = String((0..<size).map { _ in alphabet.randomElement(using: &rng)! })
            return (adding("x_fuzz_padding", raw: quoted(text), to: base.tree), .like(base.rendered), "a \(size)-byte unknown string")
        case 1:
            let text = "[" + (0..<size / 7).map { String($0) }.joined(separator: ",") + "]"
            return (adding("x_fuzz_padding", raw: Array(text.utf8), to: base.tree), .like(base.rendered), "a \(text.utf8.count)-byte unknown array")
        case 2:
            guard let history = longHistory(base, entries: size / 900) else {
                return (adding("x_fuzz_padding", raw: quoted(String(repeating: "B", count: size)), to: base.tree), .like(base.rendered), "a \(size)-byte unknown string")
            }
            return (history.rendered, .like(base.rendered), "\(size / 900) older renewals")
        case 3:
            let space = { (count: Int, rng: inout SeededRandom) in (0..<count).map { _ in whitespace.randomElement(using: &rng)! } }
            let body = space(size, &rng) + base.tree.rendered(whitespace: &rng) + space(size, &rng)
            return (body, .like(base.rendered), "\(2 * size) bytes of whitespace")
        case 4:
            let page = "<html><body>" + String(repeating: "We are temporarily unable to process your request. ", count: size / 52) + "</body></html>"
            return (Array(page.utf8), .notJSON, "a \(page.utf8.count)-byte page")
        default:
            let padded = adding("x_fuzz_padding", raw: quoted(String(repeating: "Q", count: size)), to: base.tree)
            return (Array(padded.prefix(size / 2 + Int.random(in: 0..<size / 2, using: &rng))), .notJSON, "a padded body cut short")
        }
    }

    /// The answer with `entries` older renewals of its first chain, all upgraded away from and
    /// expiring before every transaction it holds: the decision must not move.
    static func longHistory(_ base: Base, entries: Int) -> JSONValue? {
        guard let index = base.tree.memberIndex("latest_receipt_info") else { return nil }
        let list: [JSONValue]
        switch base.tree.member("latest_receipt_info") {
        case .array(let elements)?: list = elements
        case .object(let single)?: list = [.object(single)]
        default: return nil
        }
        let expiries = list.compactMap { $0.member("expires_date_ms")?.integerText.flatMap { Int64($0) } }
        guard let template = list.first(where: { $0.member("expires_date_ms") != nil }), let earliest = expiries.min() else { return nil }
        let copies = (0..<entries).map { k -> JSONValue in
            let expires = earliest - Int64(k + 1) * AppleJSON.day
            return template
                .setting("transaction_id", .string("fuzz-old-\(k)"))
                .setting("expires_date_ms", .string(String(expires)))
                .setting("purchase_date_ms", .string(String(expires - 30 * AppleJSON.day)))
                .setting("is_upgraded", .string("true"))
                .setting("cancellation_date_ms", nil)
        }
        return base.tree.updating(at: [index]) { _ in .array(list + copies) }
    }

    /// Nesting past the reader's limit is not JSON; within it, it is an unknown key or a wrong type.
    static func deepNesting(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let members = base.members
        func depth(around start: Int) -> Int {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<6: return Int.random(in: 1...100, using: &rng)
            case 6..<9: return max(1, depthLimit - start + Int.random(in: 0...1, using: &rng))
            default: return Int.random(in: 1_000...50_000, using: &rng)
            }
        }
        switch Int.random(in: 0..<3, using: &rng) {
        case 0:
            let member = members.filter { $0.kind == .ignored }.randomElement(using: &rng)
            let start = member?.depth ?? 1
            let levels = depth(around: start)
            let text = nesting(levels, shape: Int.random(in: 0..<3, using: &rng))
            let body = member.map { splice(base.tree, at: $0.path, raw: text) } ?? adding("x_fuzz_nest", raw: text, to: base.tree)
            return (body, start + levels <= depthLimit ? .like(base.rendered) : .notJSON, "\(levels) levels in \(member?.key ?? "x_fuzz_nest") at depth \(start)")
        case 1:
            let member = members.filter { $0.kind != .ignored }.randomElement(using: &rng)!
            let levels = depth(around: member.depth)
            let body = splice(base.tree, at: member.path, raw: nesting(levels, shape: 0))
            return (body, member.depth + levels <= depthLimit ? .unexpectedResponse : .notJSON, "\(levels) levels of arrays in \(member.key)")
        default:
            let levels = depth(around: 0)
            let shape = Int.random(in: 0..<2, using: &rng)
            // A document of nested arrays is not an object; nested objects hold no status.
            return (nesting(levels, shape: shape), levels <= depthLimit ? .unexpectedResponse : .notJSON, "a document \(levels) levels deep")
        }
    }

    /// Words, other numerals and other notations where Apple sends a string of digits.
    static func nonNumericString(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let members = base.members
        let flags = members.filter { $0.kind == .bool }
        if !flags.isEmpty, rng.chance(0.15) {
            let member = flags.randomElement(using: &rng)!
            let text = boolRejects.filter { $0.hasPrefix("\"") }.randomElement(using: &rng)!
            return (splice(base.tree, at: member.path, raw: Array(text.utf8)), .unexpectedResponse, "\(member.key) = \(text)")
        }
        let member = members.filter { $0.kind == .int64 || $0.kind == .status }.randomElement(using: &rng)!
        if rng.chance(0.1), let result = substitution(member, in: base, from: .equivalent, &rng) { return result }
        let text = nonNumericStrings.randomElement(using: &rng)!
        return (splice(base.tree, at: member.path, raw: Array(text.utf8)), .unexpectedResponse, "\(member.key) = \(text)")
    }

    /// Dates written as dates where milliseconds belong; the other two forms are never read.
    static func otherDateForm(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let dated = base.members.filter { $0.key.contains("date") }
        let text = dateForms.randomElement(using: &rng)!
        guard let member = dated.randomElement(using: &rng) else {
            return (adding("expires_date", raw: Array(text.utf8), to: base.tree), .like(base.rendered), "expires_date: \(text) added")
        }
        guard member.kind == .int64 else {
            return (splice(base.tree, at: member.path, raw: Array(text.utf8)), .like(base.rendered), "ignored \(member.key) = \(text)")
        }
        let roll = Double.random(in: 0..<1, using: &rng)
        if roll < 0.15, let digits = member.value.integerText, isCanonicalInteger(digits) {
            return (splice(base.tree, at: member.path, raw: Array(digits.utf8)), .like(base.rendered), "\(member.key) as a JSON number")
        }
        if roll < 0.35 {
            let removed = base.tree.removing(at: member.path).rendered
            return (removed, .like(removed), "\(member.key) removed, its other forms kept")
        }
        return (splice(base.tree, at: member.path, raw: Array(text.utf8)), .unexpectedResponse, "\(member.key) = \(text)")
    }

    /// A key twice: the first one counts, whatever the second holds.
    static func duplicateKey(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let member = base.members.randomElement(using: &rng)!
        let original = member.value.rendered
        let (otherText, otherValue) = wellTyped(member.kind, &rng)
        let wrong = (refused(member.kind).randomElement(using: &rng) ?? anyValues.randomElement(using: &rng)!)
        let key = Array(", ".utf8) + quoted(member.key) + Array(": ".utf8)
        let roll = Double.random(in: 0..<1, using: &rng)
        if roll < 0.4 {
            return (splice(base.tree, at: member.path, raw: original + key + Array(otherText.utf8)), .like(base.rendered), "\(member.key) again after, \(otherText)")
        }
        if roll < 0.65 {
            let reference = base.tree.updating(at: member.path[...]) { _ in otherValue }.rendered
            return (splice(base.tree, at: member.path, raw: Array(otherText.utf8) + key + original), .like(reference), "\(member.key) \(otherText) first")
        }
        if roll < 0.85 {
            return (splice(base.tree, at: member.path, raw: original + key + Array(wrong.utf8)), .like(base.rendered), "\(member.key) again after, \(wrong)")
        }
        let expected: Expected = member.kind == .ignored ? .like(base.rendered) : .unexpectedResponse
        return (splice(base.tree, at: member.path, raw: Array(wrong.utf8) + key + original), expected, "\(member.key) \(wrong) first")
    }

    /// NaN and infinities are not JSON; huge, tiny and negative-zero numbers are, and only an
    /// integer reader's own values (-0 and the largest Int64) are accepted as integers.
    static func nanLike(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let member = base.members.randomElement(using: &rng)!
        let roll = Double.random(in: 0..<1, using: &rng)
        if roll < 0.45 {
            let token = invalidTokens.randomElement(using: &rng)!
            return (splice(base.tree, at: member.path, raw: Array(token.utf8)), .notJSON, "\(member.key) = \(token)")
        }
        let asString = roll >= 0.85
        let text = asString ? "\"" + nanStrings.randomElement(using: &rng)! + "\"" : oddNumbers.randomElement(using: &rng)!
        let body = splice(base.tree, at: member.path, raw: Array(text.utf8))
        let replaced = { (value: JSONValue) in Expected.like(base.tree.updating(at: member.path[...]) { _ in value }.rendered) }
        let unquoted = String(text.dropFirst().dropLast())
        let expected: Expected
        switch member.kind {
        case .ignored: expected = .like(base.rendered)
        case .string where asString: expected = replaced(.string(unquoted))
        case .status, .int64, .string:
            if asString { expected = unquoted == "-0" && member.kind != .string ? replaced(.string("-0")) : .unexpectedResponse }
            else { expected = integerValued.contains(text) ? replaced(.number(text)) : .unexpectedResponse }
        case .bool, .object, .objects: expected = .unexpectedResponse
        }
        return (body, expected, "\(member.key) = \(text)")
    }

    /// Bytes that are not UTF-8, a BOM, UTF-16, raw control characters, lone surrogates; and odd
    /// but valid text, which must read as the characters it spells.
    static func utf8Oddity(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        var tree = base.tree
        if !members(of: tree).contains(where: { if case .string = $0.value { true } else { false } }) {
            tree = tree.setting("x_fuzz_note", .string("a note"))
        }
        let members = members(of: tree)
        let strings = members.filter { if case .string = $0.value { true } else { false } }
        let member = strings.randomElement(using: &rng)!
        guard case .string(let text) = member.value else { fatalError("filtered above") }
        let cut = Int.random(in: 0...text.count, using: &rng)
        let (prefix, suffix) = (escaped(String(text.prefix(cut))), escaped(String(text.dropFirst(cut))))
        let quote: [UInt8] = [UInt8(ascii: "\"")]
        switch Int.random(in: 0..<9, using: &rng) {
        case 0:
            return ([0xEF, 0xBB, 0xBF] + base.tree.rendered, .notJSON, "a byte order mark")
        case 1:
            let units = Array(String(decoding: base.tree.rendered, as: UTF8.self).utf16)
            let bigEndian = rng.chance(0.5)
            let bytes = units.flatMap { bigEndian ? [UInt8($0 >> 8), UInt8($0 & 0xFF)] : [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
            return ((rng.chance(0.5) ? (bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]) : []) + bytes, .notJSON, "UTF-16")
        case 2:
            let bad = invalidUTF8.randomElement(using: &rng)!
            return (splice(tree, at: member.path, raw: quote + prefix + bad + suffix + quote), .notJSON, "\(bad) inside \(member.key)'s value")
        case 3:
            let bad = invalidUTF8.randomElement(using: &rng)!
            let key = escaped(member.key)
            let at = Int.random(in: 0...key.count, using: &rng)
            return (spliceKey(tree, at: member.path, raw: quote + key[..<at] + bad + key[at...] + quote), .notJSON, "\(bad) inside the key \(member.key)")
        case 4:
            let bad = invalidUTF8.randomElement(using: &rng)!
            return (splice(tree, at: member.path, raw: bad + member.value.rendered), .notJSON, "\(bad) before \(member.key)'s value")
        case 5:
            let control = UInt8.random(in: 0x00...0x1F, using: &rng)
            return (splice(tree, at: member.path, raw: quote + prefix + [control] + suffix + quote), .notJSON, "raw \(control) inside \(member.key)'s value")
        case 6:
            let control = ([0x00, 0x08, 0x0B, 0x0C, 0x0E, 0x1F, 0x7F] as [UInt8]).randomElement(using: &rng)!
            return (splice(tree, at: member.path, raw: [control] + member.value.rendered), .notJSON, "raw \(control) before \(member.key)'s value")
        case 7:
            let lone = loneSurrogates.randomElement(using: &rng)!
            return (splice(tree, at: member.path, raw: quote + prefix + Array(lone.utf8) + suffix + quote), .notJSON, "\(lone) inside \(member.key)'s value")
        default:
            guard member.kind == .string || member.kind == .ignored else {
                return ([0xEF, 0xBB, 0xBF] + base.tree.rendered, .notJSON, "a byte order mark")
            }
            let (raw, meaning) = validOddities.randomElement(using: &rng)!
            let reference = tree.updating(at: member.path[...]) { _ in .string(String(text.prefix(cut)) + meaning + String(text.dropFirst(cut))) }
            return (splice(tree, at: member.path, raw: quote + prefix + Array(raw.utf8) + suffix + quote), .like(reference.rendered), "\(raw.debugDescription) inside \(member.key)'s value")
        }
    }

    /// Edits of the stored answers that keep their meaning (order, whitespace, unknown keys,
    /// repeated entries) or drop a member.
    static func fixtureMutation(_ base: Base, _ rng: inout SeededRandom) -> Generated {
        let members = base.members
        switch Int.random(in: 0..<8, using: &rng) {
        case 0:
            let member = members.randomElement(using: &rng)!
            let removed = base.tree.removing(at: member.path).rendered
            return (removed, member.kind == .status ? .unexpectedResponse : .like(removed), "\(member.key) removed")
        case 4:
            let member = members.randomElement(using: &rng)!
            let retryFlags: Set = ["is-retryable", "is_retryable"]
            var renamed: String
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: renamed = member.key.prefix(1).uppercased() + member.key.dropFirst()
            case 1: renamed = member.key.contains("_") ? member.key.replacingOccurrences(of: "_", with: "-") : member.key.replacingOccurrences(of: "-", with: "_")
            case 2: renamed = " " + member.key
            default: renamed = member.key + "_x"
            }
            if renamed == member.key { renamed = member.key + "_x" }
            let body = base.tree.updating(at: member.path.dropLast()) { $0.renamingMember(member.path.last!, to: renamed) }.rendered
            let expected: Expected
            if retryFlags == [member.key, renamed] { expected = .like(base.rendered) }
            else if member.kind == .status { expected = .unexpectedResponse }
            else { expected = .like(base.tree.removing(at: member.path).rendered) }
            return (body, expected, "\(member.key) renamed \(renamed)")
        case 6:
            return (base.tree.rendered(whitespace: &rng), .like(base.rendered), "whitespace between tokens")
        case 7:
            var tree = base.tree
            var notes: [String] = []
            for _ in 0..<Int.random(in: 2...4, using: &rng) {
                let (next, note) = meaningKeepingEdit(tree, &rng)
                tree = next
                notes.append(note)
            }
            return (rng.chance(0.5) ? tree.rendered(whitespace: &rng) : tree.rendered, .like(base.rendered), notes.joined(separator: ", "))
        default:
            let (tree, note) = meaningKeepingEdit(base.tree, &rng)
            return (tree.rendered, .like(base.rendered), note)
        }
    }

    /// Members in another order, array entries in another order or repeated, an unknown member.
    static func meaningKeepingEdit(_ tree: JSONValue, _ rng: inout SeededRandom) -> (JSONValue, String) {
        let (objects, arrays) = tree.containers
        switch Int.random(in: 0..<4, using: &rng) {
        case 0:
            let path = objects.randomElement(using: &rng)!
            return (tree.updating(at: path[...]) { value in
                guard case .object(var object) = value else { return value }
                object.members.shuffle(using: &rng)
                return .object(object)
            }, "members of \(path) shuffled")
        case 1 where !arrays.isEmpty:
            let path = arrays.randomElement(using: &rng)!
            return (tree.updating(at: path[...]) { value in
                guard case .array(var elements) = value else { return value }
                elements.shuffle(using: &rng)
                return .array(elements)
            }, "entries of \(path) shuffled")
        case 2 where !arrays.isEmpty:
            let path = arrays.randomElement(using: &rng)!
            return (tree.updating(at: path[...]) { value in
                guard case .array(var elements) = value, let any = elements.randomElement(using: &rng) else { return value }
                elements.insert(any, at: Int.random(in: 0...elements.count, using: &rng))
                return .array(elements)
            }, "an entry of \(path) repeated")
        default:
            let path = objects.randomElement(using: &rng)!
            let value = try! JSONValue.parse(Array(anyValues.randomElement(using: &rng)!.utf8))
            return (tree.updating(at: path[...]) { $0.setting("x_fuzz_\(rng.next() % 10_000)", value) }, "an unknown member in \(path)")
        }
    }
}

// MARK: - Values, by how the client reads them

extension ResponseFuzzTests {
    /// JSON's four whitespace bytes.
    static let whitespace: [UInt8] = [0x20, 0x0A, 0x0D, 0x09]

    /// The reader refuses documents deeper than this (`JSONParser.maxDepth`), rather than risk the stack.
    static let depthLimit = 64

    enum Pool { case refused, absent, equivalent }

    /// `member` replaced by a value from `pool`: refused, read as absent, or read as the same value.
    static func substitution(_ member: Member, in base: Base, from pool: Pool, _ rng: inout SeededRandom) -> Generated? {
        let forms: [String]
        switch pool {
        case .refused: forms = refused(member.kind)
        case .absent: forms = absent(member.kind)
        case .equivalent: forms = equivalents(of: member)
        }
        guard let text = forms.randomElement(using: &rng) else { return nil }
        let body = splice(base.tree, at: member.path, raw: Array(text.utf8))
        switch pool {
        case .refused: return (body, .unexpectedResponse, "\(member.key) = \(text)")
        case .absent: return (body, .like(base.tree.removing(at: member.path).rendered), "\(member.key) = \(text), read as absent")
        case .equivalent: return (body, .like(base.rendered), "\(member.key) = \(text), read as before")
        }
    }

    /// Strings that are not a 64-bit integer in any form Apple uses.
    static let nonNumericStrings = [
        #""abc""#, #""next tuesday""#, #""1.5""#, #""1e3""#, #""0x1F""#, #""NaN""#, #""Infinity""#, #""-Infinity""#,
        #""9223372036854775808""#, #""-9223372036854775809""#, #""1,570,356,000,000""#, #""1 570 356 000 000""#,
        #""\u0661\u0665\u0667""#, #""１２３""#, #""12abc""#, #""--1""#, #""1-""#, #""\u00a0123""#, #""\n123""#, #""123\r""#,
        #""null""#, #""true""#, #""1570356000000ms""#, #""+-1""#, #""0b101""#, #""1_000""#,
    ]
    static let integerRejects = [
        "{}", "[]", "true", "false", "1.5", "1e3", "1e309", "-0.0", "9223372036854775808", #"["1"]"#, #"{"ms": "1"}"#,
    ] + nonNumericStrings
    static let boolRejects = [
        "{}", "[]", "2", "-1", "1.0", "-0", "0.0", "1e309", "10", #""yes""#, #""no""#, #""maybe""#, #""2""#, #""NaN""#, #""on""#,
        #""off""#, #""Y""#, #""t""#, #""1.0""#, #""\n1""#, #""01""#, #""truee""#, #"["true"]"#,
    ]
    static let stringRejects = ["{}", "[]", "true", "false", "1.5", "1e3", "1e309", "-0.0", #"["x"]"#, #"{"a": 1}"#, "9223372036854775808", "0.0", "-1.5e-3"]
    static let objectRejects = [#""x""#, "1", "true", "[]", "[{}]", #""{}""#, #"[{"bundle_id": "com.example.premium"}]"#]
    static let objectsRejects = [#""x""#, "1", "true", "[1]", #"["x"]"#, "[null]", "[[]]", "[{}, 1]", #""""#, #""[]""#, "false", "0"]
    /// Every value above, for members the client never reads.
    static let anyValues = Array(Set(integerRejects + boolRejects + stringRejects + objectRejects + objectsRejects + ["null", #""""#])).sorted()

    static func refused(_ kind: Kind) -> [String] {
        switch kind {
        case .status: integerRejects + ["null", #""""#, #"" ""#]
        case .int64: integerRejects
        case .bool: boolRejects
        case .string: stringRejects
        case .object: objectRejects
        case .objects: objectsRejects
        case .ignored: []
        }
    }

    /// Values read as if the member were not there.
    static func absent(_ kind: Kind) -> [String] {
        switch kind {
        case .int64: ["null", #""""#, #""  ""#, #""\t""#, #"" \t ""#]
        case .bool: ["null", #""""#, #"" ""#]
        case .string, .object: ["null"]
        case .objects: ["null", "[]"]
        case .status, .ignored: []
        }
    }

    /// Other spellings of the member's value that Apple has used.
    static func equivalents(of member: Member) -> [String] {
        switch member.kind {
        case .status, .int64:
            guard let digits = member.value.integerText else { return [] }
            return [#""\#(digits)""#, #"" \#(digits)""#, #""\#(digits)\t""#, #"" \t\#(digits) ""#] + (isCanonicalInteger(digits) ? [digits] : [])
        case .bool:
            guard let flag = member.value.flag else { return [] }
            return flag ? ["true", "1", #""1""#, #""true""#, #""TRUE""#, #"" True ""#, #""\t1""#] : ["false", "0", #""0""#, #""false""#, #""FALSE""#, #""False ""#, #"" 0""#]
        case .string:
            switch member.value {
            case .string(let text): return [String(decoding: quoted(text), as: UTF8.self)] + (isCanonicalInteger(text) ? [text] : [])
            case .number(let text): return [#""\#(text)""#, text]
            default: return []
            }
        case .objects:
            switch member.value {
            case .array(let elements) where elements.count == 1: return [String(decoding: elements[0].rendered, as: UTF8.self)]
            case .object: return ["[" + String(decoding: member.value.rendered, as: UTF8.self) + "]"]
            default: return []
            }
        case .object, .ignored: return []
        }
    }

    /// A well-typed value other than the member's, as text and as the value it reads as.
    static func wellTyped(_ kind: Kind, _ rng: inout SeededRandom) -> (String, JSONValue) {
        switch kind {
        case .status:
            let code = ["0", "21003", "21005", "21007", "21100"].randomElement(using: &rng)!
            return (code, .number(code))
        case .string:
            let text = "dup-\(rng.next() % 1_000)"
            return (#""\#(text)""#, .string(text))
        case .int64:
            let ms = String(AppleJSON.t0 + Int64.random(in: -90...90, using: &rng) * AppleJSON.day)
            return (#""\#(ms)""#, .string(ms))
        case .bool:
            let flag = rng.chance(0.5) ? "1" : "0"
            return (#""\#(flag)""#, .string(flag))
        case .object:
            return (#"{"bundle_id": "com.other.app"}"#, .object(JSONObject(members: [("bundle_id", .string("com.other.app"))])))
        case .objects:
            return ("[]", .array([]))
        case .ignored:
            return (#""dup""#, .string("dup"))
        }
    }

    static let dateForms = [
        #""2019-10-06 10:00:00 Etc/GMT""#, #""2019-10-06T10:00:00Z""#, #""2019-10-06T10:00:00.000+00:00""#, #""Sun, 06 Oct 2019 10:00:00 GMT""#,
        #""1570356000.000""#, #""1.570356E12""#, "1.570356e12", "1570356000000.0", #""2019-10-06""#, #""10/06/2019 03:00:00 PDT""#,
        #""1570356000000 Etc/GMT""#, #""@1570356000""#, #"{"ms": 1570356000000}"#, "[2019, 10, 6]",
    ]
    /// Not JSON at all.
    static let invalidTokens = [
        "NaN", "-NaN", "Infinity", "-Infinity", "+Infinity", "+1", ".5", "01", "-01", "1.", "0x10", "nan", "inf", "undefined", "1e", "1e+",
        "--1", "Inf", "None", "True", "NULL", "-", "1.5.2", "0.e1",
    ]
    /// JSON numbers no 64-bit integer reader takes, except those in `integerValued`.
    static let oddNumbers = [
        "1e309", "-1e309", "1E400", "1e-400", "-0", "-0.0", "0e0", "0.0", "-0e-0", "123456789012345678901234567890", "4.9e-324",
        "1.7976931348623157e308", "-9223372036854775809", "9223372036854775807",
    ]
    static let integerValued: Set = ["-0", "9223372036854775807"]
    static let nanStrings = ["NaN", "Infinity", "-Infinity", "-0", "1e309", "nan", "-nan"]
    static let invalidUTF8: [[UInt8]] = [
        [0xFF], [0xFE], [0xC0, 0xAF], [0xC1, 0xBF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80],
        [0xF5, 0x80, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xBF], [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xC3, 0x28],
    ]
    static let loneSurrogates = [#"\ud800"#, #"\udbff"#, #"\udc00"#, #"\udfff"#, #"\ud800\u0041"#, #"\ud800x"#, #"\udc00\ud800"#, #"\ud800\ud800"#]
    /// Valid text as written inside quotes, and what it spells.
    static let validOddities: [(String, String)] = [
        (#"\ud83d\ude00"#, "😀"), ("😀", "😀"), (#"\u00e9"#, "é"), ("é", "é"), ("\u{FFFF}", "\u{FFFF}"), (#"\u2028"#, "\u{2028}"),
        (#"\u0000"#, "\u{0}"), ("e\u{301}", "e\u{301}"), ("\u{7F}", "\u{7F}"), (#"\uFEFF"#, "\u{FEFF}"), (#"\/"#, "/"),
        (#"\uDBFF\uDFFF"#, "\u{10FFFF}"), ("\u{10FFFF}", "\u{10FFFF}"),
    ]

    /// `-?(0|[1-9][0-9]*)` with at most 18 digits: a JSON integer that fits in 64 bits.
    static func isCanonicalInteger(_ text: String) -> Bool {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ ("0"..."9").contains($0) }) else { return false }
        return digits == "0" || digits.first != "0"
    }
}

// MARK: - Editing and writing JSON text

extension ResponseFuzzTests {
    /// Every member of every object in `tree`, with how the client reads it.
    static func members(of tree: JSONValue) -> [Member] {
        var found: [Member] = []
        func walk(_ value: JSONValue, path: [Int], place: Place, depth: Int) {
            switch value {
            case .object(let object):
                for (index, member) in object.members.enumerated() {
                    let kind = kind(of: member.key, at: index, in: object, place: place)
                    found.append(Member(path: path + [index], key: member.key, value: member.value, kind: kind, depth: depth))
                    let inner: Place
                    switch (place, kind, member.key) {
                    case (.top, .object, _): inner = .receipt
                    case (.top, .objects, "latest_receipt_info"): inner = .transaction
                    case (.top, .objects, _): inner = .renewal
                    default: inner = .elsewhere
                    }
                    walk(member.value, path: path + [index], place: inner, depth: depth + 1)
                }
            case .array(let elements):
                for (index, element) in elements.enumerated() { walk(element, path: path + [index], place: place, depth: depth + 1) }
            default:
                break
            }
        }
        walk(tree, path: [], place: .top, depth: 1)
        return found
    }

    /// How `VerifyReceiptResponse` and its entries read `key`; only the first of repeated keys counts.
    static func kind(of key: String, at index: Int, in object: JSONObject, place: Place) -> Kind {
        guard object.members.firstIndex(where: { $0.key == key }) == index else { return .ignored }
        switch place {
        case .top:
            switch key {
            case "status": return .status
            case "environment", "latest_receipt": return .string
            case "is-retryable": return .bool
            // The second spelling is read only when the first is absent or null.
            case "is_retryable": return object["is-retryable"].map { $0 == .null } ?? true ? .bool : .ignored
            case "receipt": return .object
            case "latest_receipt_info", "pending_renewal_info": return .objects
            default: return .ignored
            }
        case .receipt:
            return key == "bundle_id" ? .string : .ignored
        case .transaction:
            switch key {
            case "product_id", "transaction_id", "original_transaction_id", "cancellation_reason", "subscription_group_identifier": return .string
            case "purchase_date_ms", "expires_date_ms", "cancellation_date_ms": return .int64
            case "is_upgraded", "is_trial_period", "is_in_intro_offer_period": return .bool
            default: return .ignored
            }
        case .renewal:
            switch key {
            case "original_transaction_id", "product_id", "auto_renew_product_id": return .string
            case "auto_renew_status", "is_in_billing_retry_period": return .bool
            case "expiration_intent", "grace_period_expires_date_ms": return .int64
            default: return .ignored
            }
        case .elsewhere:
            return .ignored
        }
    }

    /// A string no answer holds, written in place of a value or key and then replaced by raw bytes.
    static let marker = "\u{1}fuzz\u{1}"

    /// `tree` written with the value at `path` replaced by `raw`, which need not be JSON.
    static func splice(_ tree: JSONValue, at path: [Int], raw: [UInt8]) -> [UInt8] {
        replacing(quoted(marker), in: tree.updating(at: path[...]) { _ in .string(marker) }.rendered, with: raw)
    }

    /// `tree` written with the key at `path` replaced by `raw` (quotes included).
    static func spliceKey(_ tree: JSONValue, at path: [Int], raw: [UInt8]) -> [UInt8] {
        replacing(quoted(marker), in: tree.updating(at: path.dropLast()) { $0.renamingMember(path.last!, to: marker) }.rendered, with: raw)
    }

    /// `tree` written with a new top-level member whose value is `raw`.
    static func adding(_ key: String, raw: [UInt8], to tree: JSONValue) -> [UInt8] {
        replacing(quoted(marker), in: tree.setting(key, .string(marker)).rendered, with: raw)
    }

    static func replacing(_ needle: [UInt8], in haystack: [UInt8], with replacement: [UInt8]) -> [UInt8] {
        // Foundation's search: a byte-by-byte loop in a debug build would cost most of the test's time.
        guard let found = Data(haystack).range(of: Data(needle)) else { return haystack }
        return Array(haystack[..<found.lowerBound]) + replacement + haystack[found.upperBound...]
    }

    /// A JSON string: quotes, backslashes and control characters escaped, everything else as UTF-8.
    static func quoted(_ text: String) -> [UInt8] { [UInt8(ascii: "\"")] + escaped(text) + [UInt8(ascii: "\"")] }

    static func escaped(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0..<0x20: out += Array(String(format: "\\u%04x", byte).utf8)
            default: out.append(byte)
            }
        }
        return out
    }

    /// `levels` nested arrays (shape 0), objects (1) or both in turn (2) around a 1.
    static func nesting(_ levels: Int, shape: Int) -> [UInt8] {
        var open: [UInt8] = []
        var close: [UInt8] = []
        for level in 0..<levels {
            if shape == 0 || (shape == 2 && level % 2 == 0) {
                open += [UInt8(ascii: "[")]
                close += [UInt8(ascii: "]")]
            } else {
                open += Array(#"{"a":"#.utf8)
                close += [UInt8(ascii: "}")]
            }
        }
        return open + [UInt8(ascii: "1")] + close.reversed()
    }

    /// The contract columns, the user and the stored receipt of every row, each as its SQLite type
    /// and the hex of its bytes: "unchanged" means byte for byte.
    static func columns(_ db: TemporaryDatabase) throws -> [Int64: [String]] {
        let names = ["user_id", "latest_receipt"] + ContractColumn.allCases.map(\.rawValue)
        let sql = "SELECT id, " + names.map { "typeof(\($0)) || ':' || hex(\($0))" }.joined(separator: ", ") + " FROM subscriptions"
        return try db.webService.read { d in
            try Dictionary(uniqueKeysWithValues: Row.fetchAll(d, sql: sql).map { row in
                (row[0] as Int64, (1...names.count).map { row[$0] as String })
            })
        }
    }

    /// One row of the loopback run: what it holds, what its receipt is answered with, and what
    /// must come of that.
    struct LoopbackPlan {
        var row: SubscriptionRow
        var body: String
        var wanted: Reading
        var note: String
    }

    /// 1,500 rows — renewing, in a grace period, or new — each answered once: as Apple sends it or
    /// mutated by one of the categories. Only answers the run must refuse, or adopt on a chain no
    /// other row holds, are kept, so every count of the report is known in advance.
    static func loopbackPlans(rows: Int, seed: UInt64) throws -> [LoopbackPlan] {
        let (t0, day) = (AppleJSON.t0, AppleJSON.day)
        var renewed = AppleJSON.Transaction()
        renewed.originalTransactionID = "CHAIN"
        renewed.transactionID = "CHAIN2"
        renewed.purchaseMs = t0 + 30 * day
        renewed.expiresMs = t0 + 60 * day
        var first = renewed
        first.transactionID = "CHAIN1"
        first.purchaseMs = t0
        first.expiresMs = t0 + 30 * day
        var renewal = AppleJSON.Renewal()
        renewal.originalTransactionID = "CHAIN"
        let template = AppleJSON.valid(latestReceipt: "NEW-CHAIN", transactions: [first, renewed], renewals: [renewal])

        var plans: [LoopbackPlan] = []
        /// Chains a row holds or will adopt: a second row adopting one would be a conflict.
        var chainsInUse: Set<String> = []
        for index in 0..<rows {
            var rng = SeededRandom(seed: seed, 77, UInt64(index))
            let chain = String(format: "7%09d", index)
            var state = SubscriptionState.unverified
            if !rng.chance(0.2) {
                chainsInUse.insert(chain)
                state = SubscriptionState(
                    originalTransactionID: chain, productID: "premium.monthly", environment: "Production",
                    expiresAt: t0 + 30 * day, autoRenewStatus: true, autoRenewProductID: "premium.monthly")
                if rng.chance(0.3) {
                    state.expiresAt = now - 2 * day
                    state.gracePeriodExpiresAt = now + 3 * day
                    state.isInBillingRetry = true
                    state.expirationIntent = 2
                }
            }
            let row = SubscriptionRow(id: Int64(index + 1), userID: "fuzz-\(index)", latestReceipt: "R-\(index)", state: state)
            let base = try base("row-\(index)", bytes: Array(template.replacingOccurrences(of: "CHAIN", with: chain).utf8), isFixture: false)
            if index % 250 == 0 {
                let padded = adding("x_fuzz_padding", raw: quoted(String(repeating: "A", count: maxResponseBytes + 100_000)), to: base.tree)
                plans.append(LoopbackPlan(row: row, body: String(decoding: padded, as: UTF8.self), wanted: .failed(.unexpectedResponse, transient: false), note: "over the size limit"))
                continue
            }
            while true {
                let generated: Generated
                if rng.chance(0.3) {
                    generated = (base.tree.rendered, .like(base.rendered), "as Apple sends it")
                } else {
                    generated = mutate(base, Category.allCases.randomElement(using: &rng)!, row: row, rng: &rng)
                }
                guard generated.body.count < maxResponseBytes - 4_096, let body = String(validating: generated.body, as: UTF8.self) else { continue }
                let wanted: Reading
                switch generated.expected {
                case .notJSON: wanted = .failed(.notJSON, transient: true)
                case .unexpectedResponse: wanted = .failed(.unexpectedResponse, transient: false)
                case .rejected: continue
                case .like(let reference):
                    let reading = read(reference, row: row)
                    guard case .decided(let outcome) = reading, let id = adoption(outcome)?.state.originalTransactionID else { continue }
                    if id != state.originalTransactionID {
                        // A new row takes the one chain it is offered: which of several it would
                        // prefer depends on the run's clock, and is the decision's tests' business.
                        guard let response = try? VerifyReceiptResponse(json: reference),
                            Set(response.latestReceiptInfo.filter { $0.expiresDateMs != nil }.compactMap(\.originalTransactionID)).count == 1
                        else { continue }
                        guard !chainsInUse.contains(id) else { continue }
                        chainsInUse.insert(id)
                    }
                    wanted = reading
                }
                plans.append(LoopbackPlan(row: row, body: body, wanted: wanted, note: generated.note))
                break
            }
        }
        return plans
    }
}

extension JSONValue {
    fileprivate func member(_ key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    fileprivate func memberIndex(_ key: String) -> Int? {
        if case .object(let object) = self { return object.members.firstIndex { $0.key == key } }
        return nil
    }

    /// Digits, as a string or a number.
    fileprivate var integerText: String? {
        switch self {
        case .string(let text), .number(let text):
            return !text.isEmpty && text.allSatisfy({ ("0"..."9").contains($0) }) ? text : nil
        default: return nil
        }
    }

    /// A flag in any of Apple's spellings.
    fileprivate var flag: Bool? {
        switch self {
        case .bool(let flag): return flag
        case .string("true"), .string("1"), .number("1"): return true
        case .string("false"), .string("0"), .number("0"): return false
        default: return nil
        }
    }

    /// This value with the one at `path` (member or element indexes) transformed.
    fileprivate func updating(at path: ArraySlice<Int>, _ transform: (JSONValue) -> JSONValue) -> JSONValue {
        guard let first = path.first else { return transform(self) }
        switch self {
        case .object(var object):
            object.members[first].value = object.members[first].value.updating(at: path.dropFirst(), transform)
            return .object(object)
        case .array(var elements):
            elements[first] = elements[first].updating(at: path.dropFirst(), transform)
            return .array(elements)
        default:
            return self
        }
    }

    /// This value without the member or element at `path`.
    fileprivate func removing(at path: [Int]) -> JSONValue {
        updating(at: path.dropLast()) { parent in
            switch parent {
            case .object(var object):
                object.members.remove(at: path.last!)
                return .object(object)
            case .array(var elements):
                elements.remove(at: path.last!)
                return .array(elements)
            default:
                return parent
            }
        }
    }

    /// This object with `key` set to `value` (appended when new), or removed when `value` is nil.
    fileprivate func setting(_ key: String, _ value: JSONValue?) -> JSONValue {
        guard case .object(var object) = self else { return self }
        if let index = object.members.firstIndex(where: { $0.key == key }) {
            if let value { object.members[index].value = value } else { object.members.remove(at: index) }
        } else if let value {
            object.members.append((key, value))
        }
        return .object(object)
    }

    fileprivate func renamingMember(_ index: Int, to key: String) -> JSONValue {
        guard case .object(var object) = self else { return self }
        object.members[index].key = key
        return .object(object)
    }

    /// The paths of every object and every array, the document included.
    fileprivate var containers: (objects: [[Int]], arrays: [[Int]]) {
        var objects: [[Int]] = []
        var arrays: [[Int]] = []
        func walk(_ value: JSONValue, _ path: [Int]) {
            switch value {
            case .object(let object):
                objects.append(path)
                for (index, member) in object.members.enumerated() { walk(member.value, path + [index]) }
            case .array(let elements):
                arrays.append(path)
                for (index, element) in elements.enumerated() { walk(element, path + [index]) }
            default: break
            }
        }
        walk(self, [])
        return (objects, arrays)
    }

    fileprivate var rendered: [UInt8] {
        var out: [UInt8] = []
        render(into: &out) { _ in }
        return out
    }

    /// Written with random JSON whitespace between tokens.
    fileprivate func rendered(whitespace rng: inout SeededRandom) -> [UInt8] {
        var out: [UInt8] = []
        render(into: &out) { out in
            guard rng.chance(0.3) else { return }
            for _ in 0..<Int.random(in: 1...3, using: &rng) { out.append(ResponseFuzzTests.whitespace.randomElement(using: &rng)!) }
        }
        return out
    }

    fileprivate func render(into out: inout [UInt8], space: (inout [UInt8]) -> Void) {
        space(&out)
        switch self {
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                space(&out)
                out += ResponseFuzzTests.quoted(member.key)
                space(&out)
                out.append(UInt8(ascii: ":"))
                member.value.render(into: &out, space: space)
            }
            space(&out)
            out.append(UInt8(ascii: "}"))
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.render(into: &out, space: space)
            }
            space(&out)
            out.append(UInt8(ascii: "]"))
        case .string(let text): out += ResponseFuzzTests.quoted(text)
        case .number(let text): out += Array(text.utf8)
        case .bool(let flag): out += Array((flag ? "true" : "false").utf8)
        case .null: out += Array("null".utf8)
        }
        space(&out)
    }
}
