import Foundation
import Testing

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
        #expect(OutboundEvent.iso8601(ms) == foundation)
    }

    /// Milliseconds exactly. Foundation, from a `Double` of seconds, truncates 0.999 s to ".998"
    /// (the helper's first version wrote that); the event's own `at_ms` is the exact figure.
    @Test func leapDaysCenturiesAndMilliseconds() {
        #expect(OutboundEvent.iso8601(951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(OutboundEvent.iso8601(4_107_542_400_000) == "2100-03-01T00:00:00.000Z")
        #expect(OutboundEvent.iso8601(-1) == "1969-12-31T23:59:59.999Z")
        #expect(OutboundEvent.iso8601(999) == "1970-01-01T00:00:00.999Z")
        #expect(OutboundEvent.iso8601(1_709_164_800_123) == "2024-02-29T00:00:00.123Z")
        #expect(OutboundEvent.iso8601(253_402_300_799_999) == "9999-12-31T23:59:59.999Z")
    }

    @Test func idsAreThirtyTwoRandomHexDigits() {
        let ids = (0..<1_000).map { _ in OutboundEvent.newID() }
        #expect(Set(ids).count == 1_000)
        for id in ids {
            #expect(id.hasPrefix("evt_"))
            #expect(id.dropFirst(4).count == 32)
            #expect(id.dropFirst(4).allSatisfy { "0123456789abcdef".contains($0) })
        }
    }
}
