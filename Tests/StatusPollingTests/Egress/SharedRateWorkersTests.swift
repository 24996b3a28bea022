import AsyncHTTPClient
import Foundation
import Logging
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import PostgresStore
@testable import StatusPolling

/// `--server-api-rate` shared by the workers of one PostgreSQL database: four `status-poller run`
/// processes, each given the whole rate, against `status-poller simulate`'s App Store Server API;
/// the simulator stamps every request as it arrives and reports the busiest one-second window. The
/// assertion is a count (never above the rate). The simulator runs in a process of its own, so the
/// suite's other tests, busy in this process, cannot hold its stamps back and bunch them.
@Suite struct SharedRateWorkersTests {
    static let clock = "2026-05-28T23:26:40Z"

    /// All four at once, and two first with two more joining 4 s later (the first two then send
    /// at half the rate each, and shrink to a quarter when the others join).
    @Test(.enabled(if: PostgresTestServer.url != nil, "needs the tests' PostgreSQL server (Scripts/test.sh starts one)"), arguments: [0, 4])
    func fourWorkersTogetherStayUnderTheRate(joiningLater: Int) async throws {
        // 9: four workers send ⌊9 ÷ 4⌋ = 2 each and two ⌊9 ÷ 2⌋ = 4 each, 8 together, which leaves
        // one request of room for a loaded machine delaying one arrival past the limiter's 100 ms
        // margin; a worker that kept the whole rate would put 9 into a second on its own.
        let rate = 9
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shared-rate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let enrolment = directory.appendingPathComponent("enrolment.csv")
        let simulator = try await StatusPollerProcess.launch([
            "simulate", "--port", "0", "--subscribers", "96", "--seed", "2626", "--start", Self.clock,
            "--rate", "second_group=0", "--rate", "sandbox=0", "--bundle-id", AppleJSON.bundleID,
            "--key-dir", directory.appendingPathComponent("keys").path, "--enrolment-file", enrolment.path,
        ], binary: StatusPollerProcess.demoBinary)
        defer { simulator.signal(SIGKILL) }
        // Its "Try: status-poller run … --backend server-api …" line names the URLs, the key and the root.
        #expect(try await eventually { simulator.stdoutSoFar.contains("Ctrl-C stops it.") })
        let tryLine = try #require(simulator.stdoutSoFar.split(separator: "\n").first { $0.hasPrefix("Try:") && $0.contains("--backend server-api") })
        var serverAPI = tryLine.split(separator: " ").dropFirst(3).map(String.init)
        let database = try #require(serverAPI.firstIndex(of: "--database"))
        serverAPI.removeSubrange(database...database + 1)
        let base = try #require(serverAPI.firstIndex(of: "--server-api-url").map { serverAPI[$0 + 1] })
        try await withStore(.postgres) { db in
            for line in try String(contentsOf: enrolment, encoding: .utf8).split(separator: "\n").dropFirst() {
                let fields = line.split(separator: ",")
                try await db.insert(userID: String(fields[0]), receipt: String(fields[1]))
            }
            let location = try #require(db.postgresLocation)
            let testURL = try #require(PostgresTestServer.url)
            var url = try #require(URLComponents(string: testURL))
            url.path = "/" + location.database
            let databaseURL = try #require(url.string)
            let outcomes = try await withThrowingTaskGroup(of: (Int, StatusPollerProcess.Outcome).self) { group in
                for k in 1...4 {
                    // A request timeout that never fires: whether a timed-out request still reached
                    // the simulator, which counts arrivals, would depend on the machine.
                    let arguments = ["run", "--worker-name", "rate-\(k)", "--now", Self.clock] + serverAPI + [
                        "--server-api-rate", String(rate), "--concurrency", "8", "--report", "json", "--log-level", "info",
                        "--metrics-file", directory.appendingPathComponent("sp-{worker}.prom").path,
                    ] + VerifyReceiptTesting.requestTimeoutOption
                    group.addTask {
                        if k > 2 { try await Task.sleep(for: .seconds(joiningLater)) }
                        return (k, try await StatusPollerProcess.launch(arguments, environment: ["STATUS_POLLER_DATABASE": databaseURL]).outcome())
                    }
                }
                var outcomes: [Int: StatusPollerProcess.Outcome] = [:]
                for try await (k, outcome) in group { outcomes[k] = outcome }
                return outcomes
            }
            var verified = 0
            var requests = 0
            for k in 1...4 {
                let outcome = try #require(outcomes[k])
                #expect(outcome.status == 0, "worker \(k): \(outcome.stderr)")
                let report = try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any], "\(outcome.stderr)")
                verified += report["verified"] as? Int ?? 0
                requests += report["requests"] as? Int ?? 0
                #expect(outcome.stderr.contains("Server API rate shared"), "\(outcome.stderr)")
                // Each worker's metrics: a file of its own, every series labelled with it.
                let prom = try String(contentsOf: directory.appendingPathComponent("sp-rate-\(k).prom"), encoding: .utf8)
                #expect(prom.contains(#"status_poller_run_subscriptions{mode="nightly",worker="rate-\#(k)",outcome="verified"} \#(report["verified"] as? Int ?? -1).0\#n"#), "\(prom)")
            }
            #expect(verified == 96)
            var request = HTTPClientRequest(url: "\(base)/simulator/arrivals")
            request.method = .POST
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 1 << 16)
            let arrivals = try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
            let total = try #require(arrivals["server_api_requests"] as? Int)
            let most = try #require(arrivals["server_api_most_in_one_second"] as? Int)
            #expect(total == requests)
            #expect(total >= 96)
            #expect(most <= rate, "the busiest second held \(most) requests, over the shared rate of \(rate)")
        }
    }

    /// The live workers are the holders of one shared advisory lock: counted while they hold it,
    /// gone when they leave (or their connection ends).
    @Test(.enabled(if: PostgresTestServer.url != nil, "needs the tests' PostgreSQL server (Scripts/test.sh starts one)"))
    func liveWorkersAreCountedFromTheDatabase() async throws {
        try await withStore(.postgres) { db in
            let location = try #require(db.postgresLocation)
            let workers = (0..<3).map { _ in PostgresRateSharing(location: location, logger: PostgresTestServer.logger) }
            await #expect(throws: (any Error).self) { try await workers[0].count() }
            for worker in workers { try await worker.join() }
            #expect(try await workers[0].count() == 3)
            await workers[2].leave()
            #expect(try await workers[0].count() == 2)
            #expect(try await workers[1].count() == 2)
            // Another database's workers do not count here.
            try await withStore(.postgres) { other in
                let elsewhere = PostgresRateSharing(location: try #require(other.postgresLocation), logger: PostgresTestServer.logger)
                try await elsewhere.join()
                #expect(try await elsewhere.count() == 1)
                #expect(try await workers[0].count() == 2)
                await elsewhere.leave()
            }
            for worker in workers.prefix(2) { await worker.leave() }
        }
    }
}
