import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The breaker bounds an outage in requests sent, counted where they land: at the server. 2,000
/// due rows at `--concurrency 64` with every retry on (4 attempts): the store receives at most the
/// breaker's window of answers plus the requests in flight when it trips, and sporadic failures
/// over the same rows never trip it.
extension CircuitBreakerTests {
    static let outageRows = 2_000
    static let outageConcurrency = 64

    /// One run at the outage's concurrency with the default breaker and every retry.
    func pollWithRetries(_ db: StoreUnderTest, _ production: String, _ sandbox: String) async throws -> RunReport {
        try await poll(db, production, sandbox, breaker: CircuitBreaker(), concurrency: Self.outageConcurrency, attempts: 4)
    }

    @Test(arguments: StoreKind.available) func anOutageOver2000RowsCostsAtMostTheWindowAndTheRequestsInFlight(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                var ids: [Int64] = []
                for i in 0..<Self.outageRows {
                    ids.append(try await db.insert(userID: "u\(i)", receipt: "R\(i)", verified("o\(i)")))
                    await server.script("R\(i)", [.http(503)])
                }
                let before = try await ids.asyncMap { try await db.contractColumns($0) }
                let report = try await pollWithRetries(db, production, sandbox)
                #expect(report.exitCode == .aborted)
                let message = try #require(report.aborted)
                #expect(message.hasPrefix("circuit breaker: 50 of the last 50 requests failed in a way that may pass (http_status 50); "), "\(message)")
                // The window's answers, and what was in flight when the 50th came back; no retry after.
                let received = await server.received.count
                #expect(received >= CircuitBreaker.defaultWindow)
                #expect(received <= CircuitBreaker.defaultWindow + Self.outageConcurrency)
                #expect(received <= 200)
                #expect(report.requests == received)
                #expect(report.verified == 0)
                #expect(try await ids.asyncMap { try await db.contractColumns($0) } == before)
            }
        }
    }

    /// One request in ten fails (a 503 on the first attempt of every ninth row): each is retried,
    /// and the breaker never trips.
    @Test(arguments: StoreKind.available) func sporadicFailuresOverTheSameRowsNeverTripIt(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                for i in 0..<Self.outageRows {
                    _ = try await db.insert(userID: "u\(i)", receipt: "R\(i)", verified("o\(i)"))
                    await server.script("R\(i)", i % 9 == 0 ? [.http(503), .json(valid("o\(i)"))] : [.json(valid("o\(i)"))])
                }
                let report = try await pollWithRetries(db, production, sandbox)
                let faults = (Self.outageRows + 8) / 9
                #expect(report.aborted == nil)
                #expect(report.exitCode == .success)
                #expect(report.verified == Self.outageRows)
                #expect(report.retries == faults)
                #expect(await server.received.count == Self.outageRows + faults)
            }
        }
    }
}
