import Testing

@testable import StatusPolling

/// A page PostgreSQL packed into one text reads as the rows it holds, through the same mappings
/// as the rows themselves; a page of another shape is refused, never misread.
struct PackedRowsTests {
    @Test func aPageOfPaidPeriodsIsReadExactly() throws {
        #expect(try PackedRows.rows("12,20454,20485,9990,USD;13,20460,20825,8332,EUR") { try PaidPeriod(&$0) } == [
            PaidPeriod(subscriptionID: 12, purchaseDay: 20_454, expiryDay: 20_485, monthlyMilliunits: 9_990, currency: "USD"),
            PaidPeriod(subscriptionID: 13, purchaseDay: 20_460, expiryDay: 20_825, monthlyMilliunits: 8_332, currency: "EUR"),
        ])
        #expect(try PackedRows.rows(nil) { try PaidPeriod(&$0) }.isEmpty)
        #expect(try PackedRows.rows("") { try PaidPeriod(&$0) }.isEmpty)
    }

    /// An empty field is NULL, wherever it lies; integers keep their sign and their whole range.
    @Test func emptyFieldsAreNullAndIntegersAreExact() throws {
        let rows = try PackedRows.rows(",-7,x;-9223372036854775808,9223372036854775807,;0,,renewed") { row in
            (try row.integer(), try row.integer(), try row.text())
        }
        #expect(rows.map(\.0) == [nil, Int64.min, 0])
        #expect(rows.map(\.1) == [-7, Int64.max, nil])
        #expect(rows.map(\.2) == ["x", nil, "renewed"])
        let equal = try PackedRows.rows("poll,;notification,x") { row in (try row.text(equals: "poll"), try row.text(equals: "poll")) }
        #expect(equal.map(\.0) == [true, false])
        #expect(equal.map(\.1) == [false, false])
    }

    /// A trail page reads into the same events as its rows would (``SubscriptionEventsSQL/trailEvent(_:)``).
    @Test func aTrailPageReadsIntoTheSameEvents() throws {
        let page = "7,3,1767225600000,entered_grace,Production,notification,1767225599000,,1,1767222000000,1767744000000,1,,2,;"
            + "8,3,1767312000000,refunded,Sandbox,poll,,1767311000000,1,1768000000000,,0,0,,1767308400000"
        let events = try PackedRows.rows(page) { try SubscriptionEventsSQL.trailEvent(&$0) }
        #expect(events == [
            TrailEvent(
                id: 7, subscriptionID: 3, atMs: 1_767_225_600_000, reason: "entered_grace", environment: "Production", source: "notification",
                notifiedAtMs: 1_767_225_599_000,
                new: TrailState(
                    isVerified: true, expiresAt: 1_767_222_000_000, gracePeriodExpiresAt: 1_767_744_000_000, isInBillingRetry: true,
                    autoRenewStatus: nil, expirationIntent: 2, cancelledAt: nil)),
            TrailEvent(
                id: 8, subscriptionID: 3, atMs: 1_767_312_000_000, reason: "refunded", environment: "Sandbox", source: "poll", notifiedAtMs: nil,
                new: TrailState(
                    isVerified: true, expiresAt: 1_768_000_000_000, gracePeriodExpiresAt: nil, isInBillingRetry: false, autoRenewStatus: false,
                    expirationIntent: nil, cancelledAt: 1_767_308_400_000),
                revokedAtMs: 1_767_311_000_000),
        ])
    }

    /// Too few fields, too many, a field that is not the integer read, one out of range, a NULL
    /// where the mapping needs a value, a stray separator: each names the record it could not read.
    @Test func aPageOfAnotherShapeIsRefusedNamingTheRecord() throws {
        let bad: [(page: String, record: String)] = [
            ("12,20454,20485,9990", "12,20454,20485,9990"),
            ("12,20454,20485,9990,USD,1", "12,20454,20485,9990,USD,1"),
            ("12,20454,x,9990,USD", "12,20454,x,9990,USD"),
            ("12,20454,20485,99999999999999999999,USD", "12,20454,20485,99999999999999999999,USD"),
            ("12,20454,20485,-,USD", "12,20454,20485,-,USD"),
            ("12,20454,20485,9990,", "12,20454,20485,9990,"),
            ("1,2,3,4,USD;", "1,2,3,4,USD"),
            ("1,2,3,4,USD;;1,2,3,4,EUR", ""),
        ]
        for (page, record) in bad {
            let error = #expect(throws: PackedRows.MalformedPage.self) { try PackedRows.rows(page) { try PaidPeriod(&$0) } }
            #expect(error?.record == record, "\(page)")
        }
    }
}
