import AppStoreSimulator
import AsyncHTTPClient
import Foundation
import Testing

/// The Server API's injected faults, each with Apple's exact status, body and headers; outage
/// windows; and draws kept apart from verifyReceipt's, which must not change.
@Suite struct SimulatorServerAPIFaultTests {
    static let start: Int64 = 1_790_000_000_000
    static let population = Population(PopulationConfiguration(subscribers: 50, seed: 3, startMs: start))
    typealias Kit = ServerAPITestKit
    typealias APIFault = FaultConfiguration.ServerAPIFault

    var someone: SimulatedSubscriber { Self.population.subscribers.first { $0.environment == "Production" && $0.chains.count == 2 }! }

    static let errorAnswers: [(APIFault, Int, String)] = [
        (.accountNotFoundRetryable, 404, #"{"errorCode":4040002,"errorMessage":"Account not found. Please try again."}"#),
        (.appNotFoundRetryable, 404, #"{"errorCode":4040004,"errorMessage":"App not found. Please try again."}"#),
        (.originalTransactionIDNotFoundRetryable, 404, #"{"errorCode":4040006,"errorMessage":"Original transaction id not found. Please try again."}"#),
        (.internalRetryable, 500, #"{"errorCode":5000001,"errorMessage":"An unknown error occurred. Please try again."}"#),
        (.internalError, 500, #"{"errorCode":5000000,"errorMessage":"An unknown error occurred."}"#),
        (.rateLimited, 429, #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#),
    ]

    @Test func eachErrorFaultIsApplesAnswer() async throws {
        let simulator = AppStoreSimulator(population: Self.population, clockMs: Self.start)
        try await Kit.withServer(simulator) { endpoints, client in
            for (fault, status, body) in Self.errorAnswers {
                simulator.setFaults(FaultConfiguration(retryAfterSeconds: 7, serverAPIRates: [fault: 1]))
                for path in ["v1/subscriptions/", "v2/history/"] {
                    let before = Int64(Date().timeIntervalSince1970 * 1000)
                    let reply = try await Kit.get(client, simulator, endpoints.serverAPIURL, path + someone.chains[0].originalTransactionID)
                    let after = Int64(Date().timeIntervalSince1970 * 1000)
                    #expect(reply.status == status, "\(fault)")
                    #expect(reply.body == body)
                    #expect(reply.headers["content-type"] == "application/json")
                    if fault == .rateLimited {
                        // Retry-After is a UNIX time in milliseconds: now + 7 s.
                        let retryAt = try #require(Int64(reply.headers["retry-after"] ?? ""))
                        #expect((before + 7000)...(after + 7000) ~= retryAt)
                    } else {
                        #expect(reply.headers["retry-after"] == nil)
                    }
                }
                #expect(simulator.statistics.outcomes["server_api_fault_\(fault.rawValue)"] == 2)
            }
        }
    }

    @Test func slowDroppedAndTamperedAnswers() async throws {
        let simulator = AppStoreSimulator(population: Self.population, faults: FaultConfiguration(slowAnswerDelay: .milliseconds(600), serverAPIRates: [.slowAnswer: 1]), clockMs: Self.start)
        let path = "v1/subscriptions/" + someone.chains[0].originalTransactionID
        try await Kit.withServer(simulator) { endpoints, client in
            let clock = ContinuousClock()
            let began = clock.now
            let slow = try await Kit.get(client, simulator, endpoints.serverAPIURL, path)
            #expect(clock.now - began >= .milliseconds(600))
            #expect(slow.status == 200)
            #expect((slow.json["data"] as? [[String: Any]])?.count == 2)

            simulator.setFaults(FaultConfiguration(serverAPIRates: [.droppedConnection: 1]))
            await #expect(throws: (any Error).self) { try await Kit.get(client, simulator, endpoints.serverAPIURL, path) }

            simulator.setFaults(FaultConfiguration(serverAPIRates: [.tamperedSignature: 1]))
            let tampered = try await Kit.get(client, simulator, endpoints.serverAPIURL, path)
            #expect(tampered.status == 200)
            let entries = (tampered.json["data"] as? [[String: Any]] ?? []).flatMap { $0["lastTransactions"] as? [[String: Any]] ?? [] }
            #expect(entries.count == 2)
            let bad = try #require(entries.first?["signedTransactionInfo"] as? String)
            await #expect(throws: Kit.VerificationFailure.self) { try await Kit.verified(bad, trusting: simulator.pki.rootCertificateDER) }
            // Still a well-formed JWS whose payload decodes: only the signature gives it away.
            let lied = try Kit.payload(bad)
            let truth = try #require(someone.chains[0].current(at: Self.start))
            #expect(Kit.int64(lied["expiresDate"]) != truth.expiresMs)
            #expect(lied["transactionId"] as? String == truth.transactionID)
            _ = try await Kit.verified(try #require(entries.first?["signedRenewalInfo"] as? String), trusting: simulator.pki.rootCertificateDER)
            _ = try await Kit.verified(try #require(entries.last?["signedTransactionInfo"] as? String), trusting: simulator.pki.rootCertificateDER)

            let history = try await Kit.get(client, simulator, endpoints.serverAPIURL, "v2/history/" + someone.chains[0].originalTransactionID)
            let signed = history.json["signedTransactions"] as? [String] ?? []
            #expect(signed.count >= 2)
            await #expect(throws: Kit.VerificationFailure.self) { try await Kit.verified(signed[0], trusting: simulator.pki.rootCertificateDER) }
            _ = try await Kit.verified(signed[1], trusting: simulator.pki.rootCertificateDER)

            let outcomes = simulator.statistics.outcomes
            #expect(outcomes["server_api_fault_slow_answer"] == 1)
            #expect(outcomes["server_api_fault_dropped_connection"] == 1)
            #expect(outcomes["server_api_fault_tampered_signature"] == 2)
            #expect(simulator.statistics.serverAPIRequests == ["inApps/v1/subscriptions": 3, "inApps/v2/history": 1])
        }
    }

    @Test func anOutageAnswers503Then500() async throws {
        var faults = FaultConfiguration()
        faults.outages = [Self.start...(Self.start + 1000)]
        let simulator = AppStoreSimulator(population: Self.population, faults: faults, clockMs: Self.start)
        try await Kit.withServer(simulator) { endpoints, client in
            var answers: [String] = []
            for _ in 0..<4 {
                let reply = try await Kit.get(client, simulator, endpoints.serverAPIURL, "v1/subscriptions/" + someone.chains[0].originalTransactionID)
                answers.append("\(reply.status) \(reply.body)")
            }
            let internalError = #"500 {"errorCode":5000000,"errorMessage":"An unknown error occurred."}"#
            #expect(answers == ["503 Service Unavailable", internalError, "503 Service Unavailable", internalError])
            #expect(simulator.statistics.outcomes["server_api_outage"] == 4)
            #expect(simulator.statistics.faults == 0)
        }
    }

    @Test func spreadCoversTheServerAPIWithoutMovingVerifyReceiptDraws() throws {
        let spread = FaultConfiguration.spread(total: 0.5)
        #expect(abs(spread.totalRate - 0.5) < 1e-9)
        #expect(abs(spread.serverAPITotalRate - 0.5) < 1e-9)
        #expect(Set(spread.serverAPIRates.keys) == Set(APIFault.allCases))
        #expect(abs(spread.serverAPIRates[.internalError]! * 10 - spread.serverAPIRates[.internalRetryable]!) < 1e-12)
        let calm = FaultConfiguration.spread(total: 0.5, excluding: [.slowAnswer, .droppedConnection])
        #expect(calm.serverAPIRates[.slowAnswer] == nil && calm.serverAPIRates[.droppedConnection] == nil)
        #expect(abs(calm.serverAPITotalRate - 0.5) < 1e-9)

        // verifyReceipt's outcomes with and without Server API rates (and Server API requests in between) are the same.
        let receipt = someone.receipt(at: Self.start)
        let body = try JSONSerialization.data(withJSONObject: ["receipt-data": receipt, "password": "simulator-shared-secret"])
        func outcomes(_ faults: FaultConfiguration, interleave: Bool) -> [String] {
            let simulator = AppStoreSimulator(population: Self.population, faults: faults, clockMs: Self.start)
            let token = (try? Kit.token(simulator)) ?? ""
            return (0..<200).map { _ in
                if interleave {
                    _ = simulator.answerServerAPI(ServerAPIRequest(environment: .production, endpoint: .allSubscriptionStatuses, transactionID: someone.chains[0].originalTransactionID, authorization: "Bearer \(token)"))
                }
                switch simulator.answer(environment: .production, body: body).reply {
                case .json(let data): return String(decoding: data, as: UTF8.self)
                case .http(let code, _, let headers): return "http \(code) \(headers["Retry-After"] ?? "")"
                case .html: return "html"
                case .drop: return "drop"
                }
            }
        }
        var verifyReceiptOnly = spread
        verifyReceiptOnly.serverAPIRates = [:]
        #expect(outcomes(spread, interleave: true) == outcomes(verifyReceiptOnly, interleave: false))
    }

    @Test func serverAPIFaultsReplayFromTheSeed() throws {
        let key = AppStoreSimulator(population: Self.population).serverAPIKey
        func outcomes() throws -> [String] {
            let simulator = AppStoreSimulator(population: Self.population, faults: .spread(total: 0.5), clockMs: Self.start, serverAPIKey: key)
            let token = try Kit.token(simulator)
            return (0..<200).map { _ in
                let answer = simulator.answerServerAPI(ServerAPIRequest(
                    environment: .production, endpoint: .transactionHistory, transactionID: someone.chains[0].originalTransactionID, authorization: "Bearer \(token)"))
                switch answer.reply {
                case .json: return answer.delay > .seconds(1) ? "slow" : "200"
                case .http(let code, let body, _): return "\(code) \(body)"
                case .html: return "html"
                case .drop: return "drop"
                }
            }
        }
        let first = try outcomes()
        #expect(first == (try outcomes()))
        let faulty = first.filter { $0 != "200" }.count
        #expect((70...130).contains(faulty), "\(faulty) of 200 at a 50 % rate")
    }
}
