import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The event's hand-written parts against what they replace: the timestamp as Foundation's
/// ISO 8601 style writes it, the id as 32 random hex digits.
@Suite struct OutboundEventFormatTests {
    /// Whole seconds, which a `Double` of seconds holds exactly: Foundation's text and ours agree.
    @Test(arguments: [
        Int64(0), 86_399_000, 86_400_000, 951_782_400_000, 951_868_799_000, 1_709_164_800_000,
        1_750_000_000_000, 4_102_444_799_000, 253_402_300_799_000, -1_000, -86_401_000, -2_208_988_800_000,
    ])
    func theTimestampIsFoundationsISO8601(ms: Int64) {
        let foundation = Date(timeIntervalSince1970: Double(ms) / 1000).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        #expect(RFC3339Timestamp.text(ms) == foundation)
        // Without fractions, as the run's clock and the run lock's holder write it.
        #expect(RFC3339Timestamp.text(ms, fractionalSeconds: false) == Date(timeIntervalSince1970: Double(ms) / 1000).formatted(.iso8601))
        // And back: the parser the receipts and the command line's dates go through reads it.
        #expect(RFC3339Timestamp.milliseconds(RFC3339Timestamp.text(ms)) == ms)
    }

    /// Milliseconds exactly. Foundation, from a `Double` of seconds, truncates 0.999 s to ".998"
    /// (the helper's first version wrote that); the event's own `at_ms` is the exact figure.
    @Test func leapDaysCenturiesAndMilliseconds() {
        #expect(RFC3339Timestamp.text(951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(RFC3339Timestamp.text(4_107_542_400_000) == "2100-03-01T00:00:00.000Z")
        #expect(RFC3339Timestamp.text(-1) == "1969-12-31T23:59:59.999Z")
        #expect(RFC3339Timestamp.text(999) == "1970-01-01T00:00:00.999Z")
        #expect(RFC3339Timestamp.text(1_709_164_800_123) == "2024-02-29T00:00:00.123Z")
        #expect(RFC3339Timestamp.text(253_402_300_799_999) == "9999-12-31T23:59:59.999Z")
    }

    @Test func idsAreTheWallClockThenEightyBitsThatNeverRepeatInAProcess() {
        let ids = (0..<100_000).map { _ in OutboundEvent.newID(wallClockMs: 1_795_132_800_123) }
        #expect(Set(ids).count == 100_000)
        // The process's 16 bits are the same in every id; the counter's 64 look random.
        #expect(Set(ids.map { $0.dropFirst(16).prefix(4) }).count == 1)
        #expect(Set(ids.map { $0.dropFirst(20).prefix(2) }).count == 256)
        for id in ids.prefix(1_000) {
            #expect(id.hasPrefix("evt_" + String(1_795_132_800_123, radix: 16).leftPadded(to: 12)))
            #expect(id.dropFirst(4).count == 32)
            #expect(id.dropFirst(4).allSatisfy { "0123456789abcdef".contains($0) })
        }
        // Later ids sort after earlier ones (the outbox's unique index grows at its end).
        #expect(OutboundEvent.newID(wallClockMs: 1) < OutboundEvent.newID(wallClockMs: 2))
        #expect(OutboundEvent.newID(wallClockMs: 0xffff_ffff_ffff).hasPrefix("evt_ffffffffffff"))
        #expect(OutboundEvent.newID(wallClockMs: 0).hasPrefix("evt_000000000000"))
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
