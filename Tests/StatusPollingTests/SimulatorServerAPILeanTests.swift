@testable import AppStoreSimulator
import Foundation
import Testing

/// The lean stand-in's Server API answer: one signed active transaction per id, made once.
@Suite struct SimulatorServerAPILeanTests {
    typealias Kit = ServerAPITestKit

    @Test func oneSignedActiveTransactionPerIdSignedOnce() async throws {
        let standIn = LeanStandIn(bundleID: "com.example.premium", sharedSecret: "s", latency: .zero)
        // Tokens are made with the stand-in's key through a throwaway simulator carrying the same key.
        let carrier = AppStoreSimulator(population: Population(PopulationConfiguration(subscribers: 1, startMs: 0)), serverAPIKey: standIn.serverAPIKey)
        let bearer = "Bearer " + (try Kit.token(carrier))
        let now = Date()
        let (status, body) = standIn.serverAPIAnswer(.allSubscriptionStatuses, id: "123456789012", environment: "Production", authorization: bearer, now: now)
        #expect(status == 200)
        let again = standIn.serverAPIAnswer(.allSubscriptionStatuses, id: "123456789012", environment: "Production", authorization: bearer, now: now.addingTimeInterval(5))
        #expect(again.1 == body)
        let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(json["appAppleId"] as? Int == 1_234_567_890)
        let item = try #require(((json["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first)
        #expect(item["status"] as? Int == 1)
        let transaction = try await Kit.verified(try #require(item["signedTransactionInfo"] as? String), trusting: standIn.pki.rootCertificateDER)
        #expect(transaction["transactionId"] as? String == "123456789012")
        #expect((Kit.int64(transaction["expiresDate"]) ?? 0) > Int64(now.timeIntervalSince1970 * 1000))
        _ = try await Kit.verified(try #require(item["signedRenewalInfo"] as? String), trusting: standIn.pki.rootCertificateDER)

        let history = standIn.serverAPIAnswer(.transactionHistory, id: "123456789012", environment: "Sandbox", authorization: bearer, now: now)
        let page = try #require(try JSONSerialization.jsonObject(with: history.1) as? [String: Any])
        #expect((page["signedTransactions"] as? [String])?.count == 1)
        #expect(page["hasMore"] as? Bool == false)
        #expect(page["environment"] as? String == "Sandbox")
        #expect(standIn.serverAPIAnswer(.allSubscriptionStatuses, id: "1", environment: "Production", authorization: nil, now: now).0 == 401)
        #expect(standIn.serverAPIAnswer(.allSubscriptionStatuses, id: "1", environment: "Production", authorization: "Bearer x.y.z", now: now).0 == 401)
        let unknown = standIn.serverAPIAnswer(.allSubscriptionStatuses, id: "abc", environment: "Production", authorization: bearer, now: now)
        #expect(unknown.0 == 404)
        #expect(String(decoding: unknown.1, as: UTF8.self) == #"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#)
    }
}
