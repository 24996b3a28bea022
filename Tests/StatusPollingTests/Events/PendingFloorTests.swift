import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import PostgresStore
@testable import StatusPolling

/// Where PostgreSQL's take starts its walk, and the take as one prepared text.
@Suite struct PendingFloorTests {
    @Test func theFloorHoldsFiveSecondsFromAWalkFromTheBeginningPerEndpoint() {
        let floor = PendingFloor()
        let t0 = ContinuousClock.now
        #expect(floor.event(for: "web", now: t0) == 0, "no take yet: from the beginning")
        floor.record(120, for: "web", walkedFrom: 0, now: t0)
        #expect(floor.event(for: "web", now: t0 + .seconds(4)) == 120)
        #expect(floor.event(for: "crm", now: t0 + .seconds(4)) == 0, "each endpoint its own")
        // A walk from the floor raises it and keeps its lifetime: a replayed earlier event waits at most five seconds.
        floor.record(180, for: "web", walkedFrom: 120, now: t0 + .seconds(4))
        #expect(floor.event(for: "web", now: t0 + .milliseconds(4_999)) == 180)
        #expect(floor.event(for: "web", now: t0 + .seconds(5)) == 0)
        // The walk from the beginning finds a replayed event below and starts a new lifetime.
        floor.record(7, for: "web", walkedFrom: 0, now: t0 + .seconds(5))
        #expect(floor.event(for: "web", now: t0 + .seconds(9)) == 7)
        // A replay through this store forgets every floor at once.
        floor.record(9, for: "crm", walkedFrom: 0, now: t0 + .seconds(9))
        floor.forget()
        #expect(floor.event(for: "web", now: t0 + .seconds(9)) == 0)
        #expect(floor.event(for: "crm", now: t0 + .seconds(9)) == 0)
        floor.record(300, for: "web", walkedFrom: 7, now: t0 + .seconds(9))
        #expect(floor.event(for: "web", now: t0 + .seconds(9)) == 0, "a take from the forgotten floor that ends after the replay sets none")
    }

    @Test func theTakeIsOneTextForAnyValuesEveryValueBound() throws {
        let take = PreparedTake(endpoint: "web", owner: "host:42", nowMs: 1_000, untilMs: 61_000, limit: 64, from: 5_000)
        #expect(take.statement.sql(.postgres) == PreparedTake.sql)
        // The walk (endpoint, from, endpoint), the heads (now twice, endpoint, limit), the lease (owner, until, endpoint, now).
        #expect(take.statement.values == [
            .text("web"), .integer(5_000), .text("web"), .integer(1_000), .integer(1_000), .text("web"), .integer(64),
            .text("host:42"), .integer(61_000), .text("web"), .integer(1_000),
        ])
        #expect(try take.makeBindings().count == take.statement.values.count)
        #expect(!PreparedTake.sql.contains("host:42") && !PreparedTake.sql.contains("5000"))
    }
}
