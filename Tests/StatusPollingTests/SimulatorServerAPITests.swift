import AppStoreSimulator
import AsyncHTTPClient
import Foundation
import Testing

/// The simulator's App Store Server API over real HTTP on loopback: Apple's shapes with exact
/// values, the lookup by any id in its own environment only, history pages, and statuses that
/// agree with the simulator's truth. Read with JSONSerialization, not the poller's types.
@Suite struct SimulatorServerAPITests {
    static let start: Int64 = 1_790_000_000_000
    static let day: Int64 = 86_400_000
    static let population = Population(PopulationConfiguration(subscribers: 400, seed: 23, startMs: start, horizonMs: start + 700 * day))
    typealias Kit = ServerAPITestKit

    func subscriber(where predicate: (SimulatedSubscriber) -> Bool) throws -> SimulatedSubscriber {
        let found = Self.population.subscribers.first(where: predicate)
        return try #require(found)
    }

    /// Storefront code → id, currency, full prices in milliunits (monthly, yearly, pro monthly, storage).
    static let storefronts: [String: (String, String, [Int])] = [
        "USA": ("143441", "USD", [9_990, 99_990, 14_990, 2_990]), "GBR": ("143444", "GBP", [8_990, 89_990, 13_990, 2_990]),
        "DEU": ("143443", "EUR", [9_990, 99_990, 14_990, 2_990]), "JPN": ("143462", "JPY", [1_500_000, 15_000_000, 2_200_000, 450_000]),
        "CAN": ("143455", "CAD", [12_990, 129_990, 19_990, 3_990]),
    ]

    /// The population buys in every storefront, with every kind of offer: the introductory
    /// offers, a promotional offer on a renewal, an offer code on a first purchase, a win-back
    /// offer on a resubscription — each where Apple would put it, and a chain's storefront the
    /// same in all its transactions.
    @Test func thePopulationHasEveryStorefrontAndEveryOfferWhereAppleWouldPutIt() {
        var storefronts: [String: Int] = [:], offers: [Int: Int] = [:]
        for subscriber in Self.population.subscribers {
            for chain in subscriber.chains {
                storefronts[Storefront.of(chain).code, default: 0] += 1
                for (index, t) in chain.transactions.enumerated() {
                    guard let offer = SimulatedOffer.of(t, in: chain) else { continue }
                    offers[offer.type, default: 0] += 1
                    let purchase = chain.purchases.first { $0.atMs == t.purchaseMs }
                    switch offer.type {
                    case 2: #expect(index > 0 && purchase == nil)
                    case 3: #expect(index == 0 && !t.isTrial && !t.isIntroOffer)
                    case 4: #expect(purchase?.kind == .resubscription)
                    default: #expect(t.isTrial || t.isIntroOffer)
                    }
                }
            }
        }
        #expect(Set(storefronts.keys) == ["USA", "GBR", "DEU", "JPN", "CAN"])
        #expect(storefronts["USA"]! > storefronts.values.reduce(0, +) / 2)
        #expect(Set(offers.keys) == [1, 2, 3, 4])
    }

    /// The transaction payload Apple's documentation describes, restated from the chain's history.
    func expectedTransaction(_ t: SimulatedChain.Transaction, _ chain: SimulatedChain, environment: String, at ms: Int64) -> [String: Any] {
        let first = chain.transactions[0]
        var o: [String: Any] = [
            "transactionId": t.transactionID, "originalTransactionId": chain.originalTransactionID, "webOrderLineItemId": "9" + t.transactionID,
            "bundleId": "com.example.premium", "productId": t.productID, "subscriptionGroupIdentifier": chain.groupID,
            "purchaseDate": t.purchaseMs, "originalPurchaseDate": first.purchaseMs, "expiresDate": t.expiresMs, "quantity": 1,
            "type": "Auto-Renewable Subscription", "inAppOwnershipType": chain.isFamilyShared ? "FAMILY_SHARED" : "PURCHASED", "signedDate": ms, "environment": environment,
            "transactionReason": t.transactionID == first.transactionID || chain.purchases.contains { $0.atMs == t.purchaseMs } ? "PURCHASE" : "RENEWAL",
        ]
        // Which storefront and which offer are the simulator's assignment; what they mean is restated here.
        let storefront = Storefront.of(chain)
        let (id, currency, full) = Self.storefronts[storefront.code]!
        o["storefront"] = storefront.code
        o["storefrontId"] = id
        o["currency"] = currency
        let price = full[["premium.monthly", "premium.yearly", "premium.pro.monthly", "storage.monthly"].firstIndex(of: t.productID)!]
        if let offer = SimulatedOffer.of(t, in: chain) {
            #expect((offer.type == 1) == (t.isTrial || t.isIntroOffer))
            #expect(offer.discountType == (t.isTrial ? "FREE_TRIAL" : "PAY_AS_YOU_GO"))
            o["offerType"] = offer.type
            o["offerDiscountType"] = offer.discountType
            o["offerPeriod"] = t.isTrial ? "P1W" : t.productID == "premium.yearly" ? "P1Y" : "P1M"
            if offer.type > 1 { o["offerIdentifier"] = [2: "retention.half.1m", 3: "SPRING.HALF", 4: "winback.half.1m"][offer.type]! }
            o["price"] = t.isTrial ? 0 : price / 2
        } else {
            o["price"] = price
        }
        if let upgraded = t.upgradedAtMs, upgraded <= ms { o["isUpgraded"] = true }
        else if let refunded = t.refundedAtMs, refunded <= ms, (t.refundReversedAtMs ?? .max) > ms {
            o["revocationDate"] = refunded
            o["revocationReason"] = t.refundRequestedAtMs == nil ? 0 : 1
            o["revocationType"] = chain.isFamilyShared ? "FAMILY_REVOKE" : "REFUND_FULL"
        }
        return o
    }

    @Test func statusResponseIsApplesShapeWithExactValues() async throws {
        let someone = try subscriber { s in s.environment == "Production" && s.chains.count == 2 && s.chains.allSatisfy { $0.current(at: Self.start)?.expiresMs ?? 0 > Self.start } }
        let simulator = AppStoreSimulator(population: Self.population, clockMs: Self.start)
        try await Kit.withServer(simulator) { endpoints, client in
            #expect(endpoints.serverAPIURL == endpoints.baseURL)
            #expect(endpoints.serverAPISandboxURL == endpoints.baseURL + "/sandbox")
            let reply = try await Kit.get(client, simulator, endpoints.serverAPIURL, "v1/subscriptions/\(someone.chains[0].originalTransactionID)")
            #expect(reply.status == 200)
            #expect(reply.headers["content-type"] == "application/json")
            let json = reply.json
            #expect(Set(json.keys) == ["environment", "bundleId", "appAppleId", "data"])
            #expect(json["environment"] as? String == "Production")
            #expect(json["bundleId"] as? String == "com.example.premium")
            #expect(json["appAppleId"] as? Int == 1_234_567_890)
            let data = try #require(json["data"] as? [[String: Any]])
            #expect(data.map { $0["subscriptionGroupIdentifier"] as? String } == ["20000001", "20000002"])
            for (group, chain) in zip(data, someone.chains) {
                let last = try #require(group["lastTransactions"] as? [[String: Any]])
                #expect(last.count == 1)
                let entry = last[0]
                #expect(Set(entry.keys) == ["status", "originalTransactionId", "signedTransactionInfo", "signedRenewalInfo"])
                #expect(entry["status"] as? Int == 1)
                #expect(entry["originalTransactionId"] as? String == chain.originalTransactionID)
                let current = try #require(chain.current(at: Self.start))
                let transaction = try await Kit.verified(try #require(entry["signedTransactionInfo"] as? String), trusting: simulator.pki.rootCertificateDER)
                #expect(Kit.canonical(transaction) == Kit.canonical(expectedTransaction(current, chain, environment: "Production", at: Self.start)))
                let renewal = try await Kit.verified(try #require(entry["signedRenewalInfo"] as? String), trusting: simulator.pki.rootCertificateDER)
                let truth = try #require(someone.entitlement(originalTransactionID: chain.originalTransactionID, at: Self.start))
                let expectedRenewal: [String: Any] = [
                    "originalTransactionId": chain.originalTransactionID, "productId": current.productID,
                    "autoRenewProductId": truth.autoRenewProductID, "autoRenewStatus": truth.autoRenewStatus ? 1 : 0,
                    "signedDate": Self.start, "environment": "Production", "renewalDate": current.expiresMs,
                    "recentSubscriptionStartDate": Kit.int64(renewal["recentSubscriptionStartDate"]) ?? -1,
                ]
                #expect(Kit.canonical(renewal) == Kit.canonical(expectedRenewal))
                #expect((Kit.int64(renewal["recentSubscriptionStartDate"]) ?? 0) <= current.purchaseMs)
                if chain.lapses.allSatisfy({ $0.atMs > Self.start }) {
                    #expect(Kit.int64(renewal["recentSubscriptionStartDate"]) == chain.transactions[0].purchaseMs)
                }
            }
            // Any id of the customer gives the same customer; a renewal's id too.
            let renewalID = try #require(someone.chains[1].transactions.last { $0.purchaseMs <= Self.start }).transactionID
            let again = try await Kit.get(client, simulator, endpoints.serverAPIURL, "v1/subscriptions/\(renewalID)")
            #expect((again.json["data"] as? [[String: Any]])?.count == 2)
            #expect(simulator.statistics.serverAPIRequests == ["inApps/v1/subscriptions": 2])
            #expect(simulator.statistics.outcomes["server_api_status_200"] == 2)
            #expect(simulator.statistics.requests == 0)
        }
    }

    @Test func idsAnswerOnlyInTheirOwnEnvironment() async throws {
        let production = try subscriber { $0.environment == "Production" }
        let sandbox = try subscriber { $0.environment == "Sandbox" && $0.chains[0].current(at: Self.start) != nil }
        let simulator = AppStoreSimulator(population: Self.population, clockMs: Self.start)
        try await Kit.withServer(simulator) { endpoints, client in
            let notFound = #"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#
            let future = try #require(production.chains[0].transactions.first { $0.purchaseMs > Self.start }).transactionID
            let cases: [(String, String)] = [
                (endpoints.serverAPIURL, sandbox.chains[0].originalTransactionID),
                (endpoints.serverAPISandboxURL, production.chains[0].originalTransactionID),
                (endpoints.serverAPIURL, "999999999999"), (endpoints.serverAPISandboxURL, "999999999999"),
                (endpoints.serverAPIURL, future),
            ]
            for (base, id) in cases {
                for path in ["v1/subscriptions/", "v2/history/"] {
                    let reply = try await Kit.get(client, simulator, base, path + id)
                    #expect(reply.status == 404, "\(base) \(path)\(id)")
                    #expect(reply.body == notFound)
                    #expect(reply.headers["content-type"] == "application/json")
                }
            }
            let ok = try await Kit.get(client, simulator, endpoints.serverAPISandboxURL, "v1/subscriptions/\(sandbox.chains[0].originalTransactionID)")
            #expect(ok.status == 200)
            #expect(Set(ok.json.keys) == ["environment", "bundleId", "data"])
            #expect(ok.json["environment"] as? String == "Sandbox")
            let info = try #require(((ok.json["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first?["signedTransactionInfo"] as? String)
            #expect(try await Kit.verified(info, trusting: simulator.pki.rootCertificateDER)["environment"] as? String == "Sandbox")
            let history = try await Kit.get(client, simulator, endpoints.serverAPISandboxURL, "v2/history/\(sandbox.chains[0].originalTransactionID)")
            #expect(history.json["environment"] as? String == "Sandbox")
            #expect(history.json["appAppleId"] == nil)
            #expect(simulator.statistics.outcomes["server_api_error_4040010"] == 10)
        }
    }

    @Test func historyComesInPagesOfTwenty() async throws {
        let at = Self.start + 650 * Self.day
        let long = try subscriber { s in s.environment == "Production" && (21...39).contains(s.chains.reduce(0) { $0 + $1.transactions.count { $0.purchaseMs <= at } }) && s.chains.contains { $0.transactions.contains { ($0.upgradedAtMs ?? .max) <= at } } }
        let all = long.chains.flatMap { chain in chain.transactions.filter { $0.purchaseMs <= at }.map { (chain, $0) } }
            .sorted { ($0.1.purchaseMs, $0.1.transactionID) < ($1.1.purchaseMs, $1.1.transactionID) }
        let simulator = AppStoreSimulator(population: Self.population, clockMs: at)
        try await Kit.withServer(simulator) { endpoints, client in
            func pages(_ sort: String) async throws -> [[String: Any]] {
                var result: [[String: Any]] = []
                var revision: String?
                repeat {
                    let query = "?sort=\(sort)" + (revision.map { "&revision=\($0)" } ?? "")
                    let reply = try await Kit.get(client, simulator, endpoints.serverAPIURL, "v2/history/\(long.chains[0].originalTransactionID)\(query)")
                    #expect(reply.status == 200)
                    result.append(reply.json)
                    revision = reply.json["revision"] as? String
                } while result.last?["hasMore"] as? Bool == true && result.count < 5
                return result
            }
            let ascending = try await pages("ASCENDING")
            #expect(ascending.count == 2)
            #expect(Set(ascending[0].keys) == ["revision", "hasMore", "bundleId", "appAppleId", "environment", "signedTransactions"])
            #expect(ascending.map { ($0["signedTransactions"] as? [String])?.count } == [20, all.count - 20])
            #expect(ascending.map { $0["hasMore"] as? Bool } == [true, false])
            #expect(ascending[0]["revision"] as? String != ascending[1]["revision"] as? String)
            let signed = ascending.flatMap { $0["signedTransactions"] as? [String] ?? [] }
            var payloads: [[String: Any]] = []
            for jws in signed { payloads.append(try await Kit.verified(jws, trusting: simulator.pki.rootCertificateDER)) }
            #expect(payloads.map { $0["transactionId"] as? String } == all.map { $0.1.transactionID })
            for (payload, (chain, t)) in zip(payloads, all) {
                #expect(Kit.canonical(payload) == Kit.canonical(expectedTransaction(t, chain, environment: "Production", at: at)))
            }
            #expect(payloads.contains { $0["isUpgraded"] as? Bool == true })
            let descending = try await pages("DESCENDING").flatMap { $0["signedTransactions"] as? [String] ?? [] }
            #expect(try descending.map { try Kit.payload($0)["transactionId"] as? String } == all.reversed().map { $0.1.transactionID })
            let bad = try await Kit.get(client, simulator, endpoints.serverAPIURL, "v2/history/\(long.chains[0].originalTransactionID)?revision=not-ours")
            #expect(bad.status == 400)
            #expect(bad.body == #"{"errorCode":4000005,"errorMessage":"Invalid request revision."}"#)
            #expect(simulator.statistics.serverAPIRequests["inApps/v2/history"] == 5)
        }
    }

    @Test func statusAgreesWithTheTruthForEverySubscriberAtSeveralClocks() async throws {
        let small = Population(PopulationConfiguration(
            subscribers: 60, seed: 5, startMs: Self.start, horizonMs: Self.start + 300 * Self.day,
            sandboxShare: 0.2, churnRate: 0.2, billingFailureRate: 0.3, refundRate: 0.1, upgradeRate: 0.1))
        let simulator = AppStoreSimulator(population: small, clockMs: Self.start)
        let codes = ["active": 1, "expired": 2, "billing_retry": 3, "grace_period": 4, "refunded": 5]
        var seen: Set<Int> = []
        try await Kit.withServer(simulator) { endpoints, client in
            for dayOffset: Int64 in [0, 40, 95, 170, 260] {
                let at = Self.start + dayOffset * Self.day
                simulator.setClock(at)
                for subscriber in small.subscribers {
                    let base = subscriber.environment == "Sandbox" ? endpoints.serverAPISandboxURL : endpoints.serverAPIURL
                    let reply = try await Kit.get(client, simulator, base, "v1/subscriptions/\(subscriber.chains[0].originalTransactionID)")
                    let entries = (reply.json["data"] as? [[String: Any]] ?? []).flatMap { $0["lastTransactions"] as? [[String: Any]] ?? [] }
                    let truths = subscriber.chains.compactMap { subscriber.entitlement(originalTransactionID: $0.originalTransactionID, at: at) }
                    #expect(entries.count == truths.count, "\(subscriber.userID)")
                    for (entry, truth) in zip(entries, truths) {
                        #expect(entry["originalTransactionId"] as? String == truth.originalTransactionID)
                        #expect(entry["status"] as? Int == codes[truth.state], "\(subscriber.userID) \(truth.state)")
                        seen.insert(entry["status"] as? Int ?? 0)
                        let transaction = try Kit.payload(try #require(entry["signedTransactionInfo"] as? String))
                        #expect(Kit.int64(transaction["expiresDate"]) == truth.expiresAtMs)
                        #expect(transaction["productId"] as? String == truth.productID)
                        #expect(Kit.int64(transaction["revocationDate"]) == truth.cancelledAtMs)
                        let renewal = try Kit.payload(try #require(entry["signedRenewalInfo"] as? String))
                        #expect(renewal["autoRenewStatus"] as? Int == (truth.autoRenewStatus ? 1 : 0))
                        #expect(renewal["autoRenewProductId"] as? String == truth.autoRenewProductID)
                        #expect(Kit.int64(renewal["gracePeriodExpiresDate"]) == truth.gracePeriodExpiresAtMs)
                        #expect(renewal["expirationIntent"] as? Int == truth.expirationIntent)
                        if truth.expiresAtMs <= at { #expect(renewal["isInBillingRetryPeriod"] as? Bool == truth.isInBillingRetry) }
                        else { #expect(renewal["isInBillingRetryPeriod"] == nil) }
                    }
                }
            }
        }
        #expect(seen == [1, 2, 3, 4, 5])
    }
}
