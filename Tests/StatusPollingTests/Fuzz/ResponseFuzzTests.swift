import AppStoreSimulator
import Foundation
import GRDB
import Logging
import NIOCore
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
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

    // The time limits of these tests only turn a hang (a decoder that never returns) into a
    // failure, so they are far above their length on any machine: the loopback one took over
    // 7 minutes in CI, beside the suite and two builds, against a limit of 10.
    @Test(.timeLimit(.minutes(30)), arguments: [seed])
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

    @Test(.timeLimit(.minutes(30)), arguments: [seed])
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
}
