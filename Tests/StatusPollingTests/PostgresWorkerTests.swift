import Foundation
import Logging
import PostgresNIO
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import PostgresStore
@testable import StatusPolling

/// Several workers on one PostgreSQL database: the night shared through leases, a lease that
/// expires going to another worker, a dead worker's rows taken back by its successor at once, one
/// run per worker name, and whole jobs running side by side with each row verified once.
@Suite(.enabled(if: PostgresTestServer.url != nil))
struct PostgresWorkerTests {
    let t0 = AppleJSON.t0
    let day = AppleJSON.day

    func start(_ store: any PollingStore, nowMs: Int64) async throws -> Int64 {
        try await store.startRun(RunStart(mode: .nightly, nowMs: nowMs, startedAtMs: nowMs, host: "h", pid: 1, options: [:]))
    }

    func open(_ db: StoreUnderTest, worker: String, lease: Duration = .seconds(300)) async throws -> PostgresSubscriptionStore {
        try await (db.database(worker: worker, leaseDuration: lease) as! PostgreSQLDatabase).openStore()
    }

    func failure(_ id: Int64, run: Int64) -> ResultBatch.Result {
        .failed(.init(subscriptionID: id, runID: run, failure: .init(.timeout, "slow"), attemptedAtMs: t0))
    }

    @Test func workersShareOneNightAndEachRowIsLeasedOnce() async throws {
        try await withStore(.postgres) { db in
            for index in 0..<30 { try await db.insert(userID: "u\(index)", receipt: "r\(index)") }
            let a = try await open(db, worker: "a"), b = try await open(db, worker: "b")
            defer { Task { try? await a.close(); try? await b.close() } }
            let runA = try await start(a, nowMs: t0), runB = try await start(b, nowMs: t0 + 60_000)
            #expect(try await a.joinWork(runID: runA, selection: .nightly(SelectionWindows()), nowMs: t0).remaining == 30)
            // The second worker joins the night the first opened instead of opening another.
            #expect(try await b.joinWork(runID: runB, selection: .nightly(SelectionWindows()), nowMs: t0 + 60_000).remaining == 30)
            #expect(try await db.row("SELECT work_id FROM poll_runs WHERE id = \(runB)")?["work_id"] == "\(runA)")
            let first = try await a.lease(runID: runA, limit: 10, after: 0).map(\.id)
            let second = try await b.lease(runID: runB, limit: 10, after: 0).map(\.id)
            let third = try await a.lease(runID: runA, limit: 20, after: 10).map(\.id)
            #expect(first == Array(1...10))
            #expect(second == Array(11...20))
            #expect(third == Array(21...30))
            #expect(try await b.lease(runID: runB, limit: 10, after: 0).isEmpty)
            #expect(try await db.row("SELECT lease_owner, lease_run FROM subscriptions WHERE id = 15") == ["lease_owner": "b", "lease_run": "\(runB)"])
            // The write marks the rows done and releases their leases in its transaction.
            _ = try await b.write(ResultBatch(second.map { failure($0, run: runB) }, checkpoint: (runB, 20)))
            #expect(try await a.remainingWork(runID: runA) == 20)
            #expect(try await db.row("SELECT count(*) AS n FROM subscriptions WHERE lease_run IS NOT NULL")?["n"] == "20")
            #expect(try await db.row("SELECT count(*) AS n FROM work_targets WHERE done")?["n"] == "10")
            // Finishing a run releases what it leased and did not write.
            try await a.finishRun(runA, report: RunReport(nowMs: t0, dryRun: false), status: .interrupted, checkpoint: nil)
            #expect(try await b.lease(runID: runB, limit: 50, after: 20).map(\.id) == first + third)
        }
    }

    @Test func aNightThatIsDoneIsNotJoinedAndTheNextRunOpensANewOne() async throws {
        try await withStore(.postgres) { db in
            for index in 0..<3 { try await db.insert(userID: "u\(index)", receipt: "r\(index)") }
            let a = try await open(db, worker: "a")
            defer { Task { try? await a.close() } }
            let first = try await start(a, nowMs: t0)
            #expect(try await a.joinWork(runID: first, selection: .nightly(SelectionWindows()), nowMs: t0).remaining == 3)
            let rows = try await a.lease(runID: first, limit: 10, after: 0)
            _ = try await a.write(ResultBatch(rows.map { failure($0.id, run: first) }, checkpoint: (first, 3)))
            let second = try await start(a, nowMs: t0 + 3_600_000)
            #expect(try await a.joinWork(runID: second, selection: .nightly(SelectionWindows()), nowMs: t0 + 3_600_000).remaining == 3)
            #expect(try await db.row("SELECT work_id FROM poll_runs WHERE id = \(second)")?["work_id"] == "\(second)")
        }
    }

    /// A backfill whose only targets left were given up (leased `maximumLeases` times without a
    /// result) has nothing to resume: `--resume` says so instead of starting runs of no rows forever.
    @Test func aBackfillWhoseRestWasGivenUpIsNotResumable() async throws {
        try await withStore(.postgres) { db in
            try await db.insert(userID: "poison", receipt: "r")
            let worker = try await open(db, worker: "w")
            defer { Task { try? await worker.close() } }
            let start = RunStart(mode: .backfill, nowMs: t0, startedAtMs: t0, host: "h", pid: 1, options: [:])
            var run = try await worker.startBackfill(start, targets: .all).runID
            for attempt in 1...WorkSharingSQL.maximumLeases {
                if attempt > 1 { run = try await worker.resumeBackfill(try #require(try await worker.resumableBackfill()), start: start) }
                #expect(try await worker.joinWork(runID: run, selection: .backfill(runID: run), nowMs: t0).remaining == 1)
                // Each run dies holding the row.
                #expect(try await worker.lease(runID: run, limit: 1, after: 0).map(\.id) == [1])
                try await db.execute("UPDATE subscriptions SET lease_expires_at = now() - interval '1 hour'")
            }
            #expect(try await worker.resumableBackfill() == nil)
        }
    }

    @Test func aBackfillIsSharedAndResumedByAnotherWorkerWithItsOwnRun() async throws {
        try await withStore(.postgres) { db in
            for index in 0..<5 { try await db.insert(userID: "u\(index)", receipt: "r\(index)") }
            let a = try await open(db, worker: "a"), b = try await open(db, worker: "b")
            defer { Task { try? await a.close(); try? await b.close() } }
            let start = RunStart(mode: .backfill, nowMs: t0, startedAtMs: t0, host: "h", pid: 1, options: [:])
            let (first, targets) = try await a.startBackfill(start, targets: .userIDs(["u1", "u2", "u3", "u4", "nobody"]))
            #expect(targets == 4)
            #expect(try await a.joinWork(runID: first, selection: .backfill(runID: first), nowMs: t0).remaining == 4)
            let leased = try await a.lease(runID: first, limit: 2, after: 0).map(\.id)
            #expect(leased == [2, 3])
            _ = try await a.write(ResultBatch(leased.map { failure($0, run: first) }, checkpoint: (first, 3)))
            // "a" is killed here; "b" resumes the same backfill under a run of its own.
            let resumable = try #require(try await b.resumableBackfill())
            #expect(resumable.id == first)
            let second = try await b.resumeBackfill(resumable, start: start)
            #expect(second != first)
            #expect(try await b.joinWork(runID: second, selection: .backfill(runID: second), nowMs: t0).remaining == 2)
            #expect(try await b.dueSubscriptionIDs(.backfill(runID: second), nowMs: t0, after: 0) == [4, 5])
            let rest = try await b.lease(runID: second, limit: 10, after: 0).map(\.id)
            #expect(rest == [4, 5])
            _ = try await b.write(ResultBatch(rest.map { failure($0, run: second) }, checkpoint: (second, 5)))
            #expect(try await b.resumableBackfill() == nil)
            let runs = try await b.runs(last: 5)
            #expect(runs.map(\.id) == [second, first])
            #expect(runs.map(\.worker) == ["b", "a"])
            #expect(runs.map(\.workID) == [first, first])
        }
    }

    @Test func anExpiredLeaseGoesToAnotherWorkerWhoseResultIsTheOneWritten() async throws {
        try await withStore(.postgres) { db in
            for index in 0..<3 { try await db.insert(userID: "u\(index)", receipt: "r\(index)") }
            let slow = try await open(db, worker: "slow", lease: .seconds(1)), other = try await open(db, worker: "other")
            defer { Task { try? await slow.close(); try? await other.close() } }
            let runSlow = try await start(slow, nowMs: t0), runOther = try await start(other, nowMs: t0)
            _ = try await slow.joinWork(runID: runSlow, selection: .nightly(SelectionWindows()), nowMs: t0)
            _ = try await other.joinWork(runID: runOther, selection: .nightly(SelectionWindows()), nowMs: t0)
            #expect(try await slow.lease(runID: runSlow, limit: 10, after: 0).map(\.id) == [1, 2, 3])
            // Waits for the expiry by asking, so the test holds on a slow machine too.
            var taken: [Int64] = []
            for _ in 0..<300 where taken.isEmpty {
                taken = try await other.lease(runID: runOther, limit: 10, after: 0).map(\.id)
                if taken.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(taken == [1, 2, 3])
            #expect(try await slow.renewLeases(runID: runSlow, ids: [1, 2, 3]).isEmpty)
            let state = SubscriptionState(originalTransactionID: "1000000001", productID: "p", environment: "Production", expiresAt: t0 + 30 * day)
            let late = try await slow.write(ResultBatch([
                .verified(.init(subscriptionID: 1, runID: runSlow, receiptSent: "r0", state: state, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0)),
                failure(2, run: runSlow),
            ], checkpoint: (runSlow, 2)))
            #expect(late == [.superseded, nil])
            #expect(try await db.rawRow(1)?["original_transaction_id"] == nil)
            #expect(try await db.rawRow(2)?["consecutive_failures"] == "0")
            #expect(try await db.row("SELECT count(*) AS n FROM work_targets WHERE done")?["n"] == "0")
            let written = try await other.write(ResultBatch([
                .verified(.init(subscriptionID: 1, runID: runOther, receiptSent: "r0", state: state, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0)),
            ], checkpoint: (runOther, 1)))
            #expect(written == [.written(previous: .unverified)])
            #expect(try await db.rawRow(1)?["original_transaction_id"] == "1000000001")
            #expect(try await db.rawRow(1)?["lease_run"] == nil)
        }
    }

    /// A writer that holds no lease (a notification) does not wait for a run's lease: it writes
    /// when its data is newer, and leaves the lease alone. The lease holder's answer, asked before
    /// the notification was signed, is then stale: it changes nothing, says so in the trail, and
    /// still gives the row's lease up and marks it done.
    @Test func aNotificationWinsOverALeaseAndTheLeaseHoldersOlderAnswerIsStale() async throws {
        try await withStore(.postgres) { db in
            try await db.insert(userID: "u", receipt: "r")
            let worker = try await open(db, worker: "w")
            defer { Task { try? await worker.close() } }
            let run = try await start(worker, nowMs: t0)
            _ = try await worker.joinWork(runID: run, selection: .nightly(SelectionWindows()), nowMs: t0)
            #expect(try await worker.lease(runID: run, limit: 10, after: 0).map(\.id) == [1])
            let renewed = SubscriptionState(originalTransactionID: "1000000001", productID: "p", environment: "Production", expiresAt: t0 + 60 * day)
            let pushed = Provenance.notification(notificationUUID: "n-1", type: "DID_RENEW", signedAtMs: t0 + 5_000)
            let notified = try await db.store.write(ResultBatch([.verified(.init(
                subscriptionID: 1, provenance: pushed, receiptSent: "r", state: renewed, latestReceipt: nil, upstreamStatus: UpstreamStatus(backend: .serverAPI, code: 200),
                verifiedAtMs: t0 + 6_000, appleStateAtMs: t0 + 5_000))]))
            #expect(notified == [.written(previous: .unverified)])
            #expect(try await db.row("SELECT lease_run, apple_state_at FROM subscriptions WHERE id = 1") == ["lease_run": "\(run)", "apple_state_at": "\(t0 + 5_000)"])
            let older = SubscriptionState(originalTransactionID: "1000000001", productID: "p", environment: "Production", expiresAt: t0 + 30 * day)
            let polled = try await worker.write(ResultBatch([.verified(.init(
                subscriptionID: 1, runID: run, receiptSent: "r", state: older, latestReceipt: nil, upstreamStatus: .verifyReceipt(.valid), verifiedAtMs: t0))],
                checkpoint: (run, 1)))
            #expect(polled == [.stale])
            #expect(try await db.store.subscriptions(ids: [1]).first?.state == renewed)
            #expect(try await db.rawRow(1)?["lease_run"] == nil)
            #expect(try await db.row("SELECT count(*) AS n FROM work_targets WHERE done")?["n"] == "1")
            #expect(try await db.store.history(userID: "u").map(\.reason) == ["stale", "first_verified"])
        }
    }

    @Test func aNewRunOfTheSameWorkerTakesBackItsDeadPredecessorsLeasesAtOnce() async throws {
        try await withStore(.postgres) { db in
            for index in 0..<5 { try await db.insert(userID: "u\(index)", receipt: "r\(index)") }
            let dead = try await open(db, worker: "w"), successor = try await open(db, worker: "w"), stranger = try await open(db, worker: "x")
            defer { Task { try? await dead.close(); try? await successor.close(); try? await stranger.close() } }
            let deadRun = try await start(dead, nowMs: t0)
            _ = try await dead.joinWork(runID: deadRun, selection: .nightly(SelectionWindows()), nowMs: t0)
            #expect(try await dead.lease(runID: deadRun, limit: 5, after: 0).count == 5)
            let strangerRun = try await start(stranger, nowMs: t0)
            _ = try await stranger.joinWork(runID: strangerRun, selection: .nightly(SelectionWindows()), nowMs: t0)
            #expect(try await stranger.lease(runID: strangerRun, limit: 5, after: 0).isEmpty)
            let run = try await start(successor, nowMs: t0)
            #expect(try await successor.joinWork(runID: run, selection: .nightly(SelectionWindows()), nowMs: t0).remaining == 5)
            #expect(try await successor.lease(runID: run, limit: 5, after: 0).map(\.id) == [1, 2, 3, 4, 5])
        }
    }

    @Test func aRowLeasedThreeTimesWithoutAResultIsLeftToTheNextNight() async throws {
        try await withStore(.postgres) { db in
            try await db.insert(userID: "poison", receipt: "r")
            try await db.insert(userID: "fine", receipt: "r2")
            let worker = try await open(db, worker: "w")
            defer { Task { try? await worker.close() } }
            // Each run of "w" dies holding the row; its successor takes it back.
            for attempt in 1...WorkSharingSQL.maximumLeases {
                let run = try await start(worker, nowMs: t0)
                #expect(try await worker.joinWork(runID: run, selection: .nightly(SelectionWindows()), nowMs: t0).remaining == (attempt == 1 ? 2 : 1))
                let leased = try await worker.lease(runID: run, limit: attempt == 1 ? 2 : 1, after: 0).map(\.id)
                #expect(leased == (attempt == 1 ? [1, 2] : [1]))
                if attempt == 1 { _ = try await worker.write(ResultBatch([failure(2, run: run)], checkpoint: (run, 2))) }
            }
            let last = try await start(worker, nowMs: t0)
            #expect(try await worker.joinWork(runID: last, selection: .nightly(SelectionWindows()), nowMs: t0).remaining == 0)
            #expect(try await worker.lease(runID: last, limit: 5, after: 0).isEmpty)
            #expect(try await db.row("SELECT leases, done::text AS done FROM work_targets WHERE subscription_id = 1") == ["leases": "3", "done": "false"])
        }
    }

    @Test func oneRunPerWorkerNameHeldByThePostgreSQLServer() async throws {
        try await withStore(.postgres) { db in
            let holder = RunLock.Holder(pid: 4242, host: "host-a", startedAt: "2026-11-23T03:00:00Z", command: "status-poller run")
            let lease = try await db.database(worker: "night-owl").acquireRunLock(holder: holder)
            do {
                _ = try await db.database(worker: "night-owl").acquireRunLock(holder: .current(command: "status-poller run"))
                Issue.record("a second run of the same worker took the lock")
            } catch let RunLock.Failure.held(path, by) {
                #expect(path.hasPrefix("worker 'night-owl' on postgres://poller@127.0.0.1:"))
                #expect(!path.contains(PostgresTestServer.password))
                #expect(by?.pid == 4242)
                #expect(by?.host == "host-a")
            }
            // A job of the same worker ends at once with exit code 75, naming the holder.
            let job = PollJob.Configuration(selection: .nightly(SelectionWindows()), bundleID: AppleJSON.bundleID, nowMs: t0, handlesSignals: false, showsProgress: false)
            let outcome = await PollJob(
                configuration: job, database: db.database(worker: "night-owl"), source: UnreachableSource(), logger: Logger(label: "test")
            ).run()
            #expect(outcome.exitCode == .locked)
            #expect(outcome.error?.contains("status-poller worker 'night-owl' pid 4242 on host-a, started 20") == true, "\(outcome.error ?? "")")
            #expect(try await db.store.runs(last: 10).isEmpty)
            let other = try await db.database(worker: "early-bird").acquireRunLock(holder: holder)
            other.release()
            lease.release()
            // The server releases the lock when the connection closes; ask until it has.
            var again: (any RunLease)?
            for _ in 0..<300 where again == nil {
                again = try? await db.database(worker: "night-owl").acquireRunLock(holder: holder)
                if again == nil { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(again != nil)
            again?.release()
        }
    }

    @Test func twoJobsSideBySideVerifyEveryRowExactlyOnce() async throws {
        try await withStore(.postgres) { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                typealias T = AppleJSON.Transaction
                let count = 60
                for index in 0..<count {
                    try await db.insert(userID: "u\(index)", receipt: "R\(index)")
                    let answer = AppleJSON.valid(latestReceipt: nil, transactions: [
                        T(originalTransactionID: "\(1_000_000 + index)", transactionID: "\(2_000_000 + index)", expiresMs: t0 + 30 * day),
                    ], renewals: [AppleJSON.Renewal(originalTransactionID: "\(1_000_000 + index)")])
                    await server.script("R\(index)", [.json(answer)])
                }
                // Rows that lapsed 1 to 14 days before the night's UTC day: the lapsed sweep's two on
                // their turn (7 and 14 days back) are shared like any other, as are the two within
                // the near-expiry window's 48 hours; the rest are left alone.
                for back in Int64(1)...14 {
                    let otid = "\(3_000_000 + back)", expires = t0 + day - back * day + 5 * AppleJSON.hour
                    let lapsed = SubscriptionState(
                        originalTransactionID: otid, productID: "premium.monthly", environment: "Production", expiresAt: expires,
                        autoRenewStatus: false, autoRenewProductID: "premium.monthly", expirationIntent: 1)
                    try await db.insert(userID: "lapsed\(back)", receipt: "L\(back)", lapsed)
                    await server.script("L\(back)", [.json(AppleJSON.valid(latestReceipt: nil, transactions: [
                        T(originalTransactionID: otid, transactionID: otid, expiresMs: expires),
                    ], renewals: [AppleJSON.Renewal(originalTransactionID: otid, autoRenewStatus: "0", expirationIntent: "1")]))])
                }
                let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
                let configuration = VerifyReceiptTesting.configuration(production, sandbox, timeout: .seconds(60))
                let reports = try await VerifyReceiptClient.withClient(configuration, http: VerifyReceiptTesting.http) { client in
                    try await withThrowingTaskGroup(of: RunReport?.self) { group in
                        for worker in ["a", "b", "c"] {
                            let database = db.database(worker: worker)
                            group.addTask {
                                let job = PollJob.Configuration(
                                    selection: .nightly(SelectionWindows()), bundleID: AppleJSON.bundleID, nowMs: t0 + day, concurrency: 2,
                                    handlesSignals: false, showsProgress: false)
                                return await PollJob(configuration: job, database: database, source: client, logger: logger).run().report
                            }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                }
                #expect(reports.compactMap { $0?.verified }.reduce(0, +) == count + 4)
                #expect(reports.compactMap { $0?.selectedLapsed }.reduce(0, +) == 2)
                for index in 0..<count { #expect(await server.requests(for: "R\(index)").count == 1, "R\(index)") }
                for back in 1...14 { #expect(await server.requests(for: "L\(back)").count == (back % 7 == 0 || back <= 2 ? 1 : 0), "L\(back)") }
                #expect(try await db.row("SELECT count(*) AS n FROM work_targets WHERE NOT done")?["n"] == "0")
                #expect(try await db.row("SELECT count(*) AS n FROM subscriptions WHERE original_transaction_id IS NULL OR lease_run IS NOT NULL")?["n"] == "0")
                #expect(try await db.row("SELECT count(DISTINCT worker) AS workers, count(DISTINCT work_id) AS nights FROM poll_runs") == ["workers": "3", "nights": "1"])
            }
        }
    }
}
