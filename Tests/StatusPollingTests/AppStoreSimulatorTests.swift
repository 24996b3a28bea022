import AppStoreSimulator
import AsyncHTTPClient
import Foundation
import NIOCore
import Testing

/// The simulator answers as Apple does: each status code, Apple's value shapes, and each lifecycle
/// event visible in the JSON at the instant it happens. Read with JSONSerialization, not the
/// poller's types.
@Suite struct AppStoreSimulatorTests {
    static let start: Int64 = 1_790_000_000_000
    static let day: Int64 = 86_400_000
    static let population = Population(PopulationConfiguration(subscribers: 800, seed: 11, startMs: start, horizonMs: start + 200 * day))
    let simulator = AppStoreSimulator(population: Self.population)

    func ask(_ environment: SimulatedEnvironment = .production, receipt: String?, password: String? = "simulator-shared-secret", exclude: Bool = true, at ms: Int64? = nil) throws -> [String: Any] {
        if let ms { simulator.setClock(ms) }
        var body: [String: Any] = ["exclude-old-transactions": exclude]
        if let receipt { body["receipt-data"] = receipt }
        if let password { body["password"] = password }
        return try reply(simulator.answer(environment: environment, body: JSONSerialization.data(withJSONObject: body)))
    }

    func reply(_ answer: SimulatedAnswer) throws -> [String: Any] {
        guard case .json(let data) = answer.reply else { throw CocoaError(.coderInvalidValue) }
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func subscriber(where predicate: (SimulatedSubscriber) -> Bool) throws -> SimulatedSubscriber {
        let found = Self.population.subscribers.first(where: predicate)
        return try #require(found)
    }

    func chainEntries(_ json: [String: Any], _ key: String) -> [[String: Any]] { json[key] as? [[String: Any]] ?? [] }

    @Test func statusCodesForBadRequests() throws {
        let production = try subscriber { $0.environment == "Production" }
        let sandbox = try subscriber { $0.environment == "Sandbox" }
        #expect(try reply(simulator.answer(environment: .production, body: Data("not json".utf8)))["status"] as? Int == 21000)
        #expect(try ask(receipt: nil)["status"] as? Int == 21002)
        #expect(try ask(receipt: "%%% not base64 %%%")["status"] as? Int == 21002)
        #expect(try ask(receipt: Data("someone else's receipt".utf8).base64EncodedString())["status"] as? Int == 21003)
        #expect(try ask(receipt: ReceiptToken(environment: "Production", subscriberIndex: 99_999, version: 1).encoded)["status"] as? Int == 21003)
        #expect(try ask(receipt: production.receipt(at: Self.start), password: "wrong")["status"] as? Int == 21004)
        #expect(try ask(receipt: sandbox.receipt(at: Self.start))["status"] as? Int == 21007)
        #expect(try ask(.sandbox, receipt: production.receipt(at: Self.start))["status"] as? Int == 21008)
        let valid = try ask(.sandbox, receipt: sandbox.receipt(at: Self.start))
        #expect(valid["status"] as? Int == 0)
        #expect(valid["environment"] as? String == "Sandbox")
        #expect((valid["receipt"] as? [String: Any])?["receipt_type"] as? String == "ProductionSandbox")
    }

    @Test func valuesAreStringsAndDatesComeThreeWays() throws {
        let someone = try subscriber { $0.environment == "Production" && $0.chains.count == 2 }
        let json = try ask(receipt: someone.receipt(at: Self.start), at: Self.start)
        #expect(json["status"] as? Int == 0)
        #expect((json["receipt"] as? [String: Any])?["bundle_id"] as? String == "com.example.premium")
        let entries = chainEntries(json, "latest_receipt_info") + chainEntries(json, "pending_renewal_info")
        #expect(entries.count >= 4)
        let gmt = try Regex(#"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} Etc/GMT$"#)
        let pst = try Regex(#"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} America/Los_Angeles$"#)
        for entry in entries {
            for (key, value) in entry {
                #expect(value is String, "\(key) is not a string")
                if key.hasSuffix("_ms") {
                    let base = String(key.dropLast(3))
                    #expect(Int64(value as? String ?? "") != nil)
                    #expect((entry[base] as? String)?.wholeMatch(of: gmt) != nil, "\(base)")
                    #expect((entry[base + "_pst"] as? String)?.wholeMatch(of: pst) != nil, "\(base)_pst")
                }
            }
        }
        // Two subscription groups: two chains, each with its renewal info.
        let chains = Set(chainEntries(json, "latest_receipt_info").compactMap { $0["original_transaction_id"] as? String })
        #expect(chains == Set(someone.chains.map(\.originalTransactionID)))
        #expect(chainEntries(json, "pending_renewal_info").count == 2)
    }

    @Test func excludeOldTransactionsIsHonouredAndTheReceiptMovesOn() throws {
        let renewing = try subscriber { s in s.environment == "Production" && s.chains.count == 1 && s.chains[0].transactions.filter { $0.purchaseMs <= Self.start + 100 * Self.day }.count >= 5 }
        let at = Self.start + 100 * Self.day
        let all = try ask(receipt: renewing.receipt(at: Self.start), exclude: false, at: at)
        let latest = try ask(receipt: renewing.receipt(at: Self.start), exclude: true, at: at)
        let visible = renewing.chains[0].transactions.filter { $0.purchaseMs <= at }
        #expect(chainEntries(all, "latest_receipt_info").count == visible.count)
        #expect(chainEntries(latest, "latest_receipt_info").count == Set(visible.map(\.productID)).count)
        // An old receipt still verifies, and Apple hands out the newest one.
        #expect(latest["latest_receipt"] as? String == renewing.receipt(at: at))
        #expect(renewing.receipt(at: at) != renewing.receipt(at: Self.start))
        #expect(ReceiptToken(encoded: renewing.receipt(at: at))?.version == visible.count)
    }

    @Test func trialAndIntroOfferAreFlagged() throws {
        let trial = try subscriber { $0.environment == "Production" && $0.chains[0].transactions.first?.isTrial == true && $0.chains[0].transactions.first!.purchaseMs > Self.start - 6 * Self.day }
        let first = trial.chains[0].transactions[0]
        let json = try ask(receipt: trial.receipt(at: Self.start), exclude: false, at: first.purchaseMs + 3_600_000)
        #expect(chainEntries(json, "latest_receipt_info").first?["is_trial_period"] as? String == "true")
        let intro = try subscriber { $0.environment == "Production" && $0.chains[0].transactions.first?.isIntroOffer == true }
        let introJSON = try ask(receipt: intro.receipt(at: Self.start), exclude: false, at: intro.chains[0].transactions[0].purchaseMs)
        #expect(chainEntries(introJSON, "latest_receipt_info").contains { $0["is_in_intro_offer_period"] as? String == "true" })
    }

    @Test func billingRetryWithGracePeriodThenRecovery() throws {
        let failing = try subscriber { s in s.environment == "Production" && s.chains.count == 1 && s.chains[0].billingRetries.contains { $0.recovered && $0.endMs > ($0.graceEndMs ?? 0) && $0.startMs > Self.start } }
        let retry = failing.chains[0].billingRetries.first { $0.recovered && $0.endMs > ($0.graceEndMs ?? 0) && $0.startMs > Self.start }!
        let grace = try #require(retry.graceEndMs)
        #expect(grace == retry.startMs + 16 * Self.day)

        let inGrace = try ask(receipt: failing.receipt(at: Self.start), at: retry.startMs + 3_600_000)
        let pending = try #require(chainEntries(inGrace, "pending_renewal_info").first)
        #expect(pending["is_in_billing_retry_period"] as? String == "1")
        #expect(pending["expiration_intent"] as? String == "2")
        #expect(pending["grace_period_expires_date_ms"] as? String == String(grace))
        #expect(failing.entitlement(originalTransactionID: nil, at: retry.startMs + 3_600_000)?.state == "grace_period")

        let afterGrace = try ask(receipt: failing.receipt(at: Self.start), at: grace + 3_600_000)
        let pendingAfter = try #require(chainEntries(afterGrace, "pending_renewal_info").first)
        #expect(pendingAfter["grace_period_expires_date_ms"] == nil)
        #expect(pendingAfter["is_in_billing_retry_period"] as? String == "1")
        #expect(failing.entitlement(originalTransactionID: nil, at: grace + 3_600_000)?.state == "billing_retry")

        let recovered = try ask(receipt: failing.receipt(at: Self.start), at: retry.endMs + 1)
        let pendingRecovered = try #require(chainEntries(recovered, "pending_renewal_info").first)
        #expect(pendingRecovered["is_in_billing_retry_period"] == nil)
        #expect(pendingRecovered["expiration_intent"] == nil)
        let newest = chainEntries(recovered, "latest_receipt_info").compactMap { Int64($0["expires_date_ms"] as? String ?? "") }.max()
        #expect(newest == retry.endMs + 30 * Self.day)
        #expect(failing.entitlement(originalTransactionID: nil, at: retry.endMs + 1)?.state == "active")
    }

    @Test func voluntaryChurnEndsWithIntentOne() throws {
        let churned = try subscriber { s in s.environment == "Production" && s.chains.count == 1 && s.chains[0].lapses.contains { $0.intent == 1 && $0.atMs > Self.start } && s.chains[0].transactions.allSatisfy { $0.refundedAtMs == nil } }
        let lapse = churned.chains[0].lapses.first { $0.intent == 1 && $0.atMs > Self.start }!
        let before = try ask(receipt: churned.receipt(at: Self.start), at: lapse.atMs - 60_000)
        #expect(chainEntries(before, "pending_renewal_info").first?["auto_renew_status"] as? String == "0")
        #expect(chainEntries(before, "pending_renewal_info").first?["expiration_intent"] == nil)
        let after = try ask(receipt: churned.receipt(at: Self.start), at: lapse.atMs + 60_000)
        #expect(chainEntries(after, "pending_renewal_info").first?["expiration_intent"] as? String == "1")
        #expect(chainEntries(after, "pending_renewal_info").first?["is_in_billing_retry_period"] as? String == "0")
        #expect(churned.entitlement(originalTransactionID: nil, at: lapse.atMs + 60_000)?.state == "expired")
    }

    @Test func refundCarriesACancellationDate() throws {
        // Apple support's refund of the current period (not an earlier period's, asked for by the customer).
        func isRefund(_ t: SimulatedChain.Transaction) -> Bool { (t.refundedAtMs ?? 0) > Self.start && t.refundRequestedAtMs == nil }
        let refunded = try subscriber { s in s.environment == "Production" && s.chains.count == 1 && s.chains[0].transactions.contains(where: isRefund) }
        let transaction = refunded.chains[0].transactions.first(where: isRefund)!
        let at = transaction.refundedAtMs! + 60_000
        let json = try ask(receipt: refunded.receipt(at: Self.start), at: at)
        let entry = try #require(chainEntries(json, "latest_receipt_info").first { $0["transaction_id"] as? String == transaction.transactionID })
        #expect(entry["cancellation_date_ms"] as? String == String(transaction.refundedAtMs!))
        #expect(entry["cancellation_reason"] as? String == "0")
        #expect(refunded.entitlement(originalTransactionID: nil, at: at)?.state == "refunded")
        #expect(refunded.entitlement(originalTransactionID: nil, at: at)?.isEntitled == false)
    }

    @Test func upgradeMarksTheOldTransactionAndDowngradeTheNextProduct() throws {
        let upgraded = try subscriber { s in s.environment == "Production" && s.chains.count == 1 && s.chains[0].transactions.contains { ($0.upgradedAtMs ?? 0) > Self.start } }
        let old = upgraded.chains[0].transactions.first { ($0.upgradedAtMs ?? 0) > Self.start }!
        let at = old.upgradedAtMs! + 60_000
        let json = try ask(receipt: upgraded.receipt(at: Self.start), at: at)
        let entry = try #require(chainEntries(json, "latest_receipt_info").first { $0["transaction_id"] as? String == old.transactionID })
        #expect(entry["is_upgraded"] as? String == "true")
        #expect(entry["cancellation_date_ms"] as? String == String(old.upgradedAtMs!))
        #expect(upgraded.entitlement(originalTransactionID: nil, at: at)?.productID == "premium.pro.monthly")
        #expect(upgraded.entitlement(originalTransactionID: nil, at: at)?.state == "active")
        let purchase = try #require(upgraded.chains[0].purchases.first { $0.atMs == old.upgradedAtMs! })
        #expect(purchase.kind == .upgrade)
        #expect(upgraded.inAppPurchases(after: old.upgradedAtMs! - 1, through: at) == (purchase.inApp ? [old.upgradedAtMs!] : []))

        let downgrading = try subscriber { s in s.environment == "Production" && s.chains[0].autoRenewProduct.contains { $0.value == "premium.monthly" && $0.atMs > Self.start } && s.chains[0].autoRenewProduct.first?.value == "premium.pro.monthly" }
        let change = downgrading.chains[0].autoRenewProduct.first { $0.value == "premium.monthly" && $0.atMs > Self.start }!
        let pending = try #require(chainEntries(try ask(receipt: downgrading.receipt(at: Self.start), at: change.atMs + 60_000), "pending_renewal_info").first)
        #expect(pending["auto_renew_product_id"] as? String == "premium.monthly")
        #expect(pending["product_id"] as? String == "premium.pro.monthly")
    }

    @Test func resubscriptionAfterALapseIsAnInAppPurchase() throws {
        let back = try subscriber { s in s.environment == "Production" && s.chains.count == 1 && s.chains[0].inAppPurchases.contains { p in s.chains[0].lapses.contains { $0.atMs < p } && p > Self.start } && s.chains[0].transactions.allSatisfy { $0.upgradedAtMs == nil } }
        let purchase = back.chains[0].inAppPurchases.first { $0 > Self.start }!
        #expect(back.entitlement(originalTransactionID: nil, at: purchase - 60_000)?.isEntitled == false)
        #expect(back.entitlement(originalTransactionID: nil, at: purchase + 60_000)?.state == "active")
        #expect(back.receipt(at: purchase) != back.receipt(at: purchase - 1))
    }

    /// A share of resubscriptions and upgrades is bought in the App Store, uploading nothing; the
    /// share is drawn apart, so the population's lifecycles are the same whatever it is.
    @Test func purchasesOutsideTheAppFollowTheirShareAndChangeNothingElse() throws {
        func population(_ share: Double) -> Population {
            Population(PopulationConfiguration(subscribers: 400, seed: 11, startMs: Self.start, resubscribeOutsideAppRate: share))
        }
        let inApp = population(0), outside = population(1), half = population(0.5)
        func purchases(_ p: Population) -> [SimulatedChain.Purchase] { p.subscribers.flatMap { $0.chains.flatMap(\.purchases) } }
        #expect(purchases(inApp).count > 100)
        #expect(purchases(inApp).allSatisfy { $0.inApp })
        #expect(!purchases(outside).contains { $0.inApp })
        let share = Double(purchases(half).filter { !$0.inApp }.count) / Double(purchases(half).count)
        #expect(share > 0.4 && share < 0.6, "share outside the app \(share)")
        #expect(purchases(half).map(\.atMs) == purchases(inApp).map(\.atMs))
        #expect(half.subscribers.map { $0.chains.map(\.transactions.count) } == inApp.subscribers.map { $0.chains.map(\.transactions.count) })
        let comebacks = half.subscribers.flatMap { $0.resubscriptionsOutsideApp(after: 0, through: .max) }
        #expect(comebacks.count == purchases(half).filter { !$0.inApp && $0.kind == .resubscription }.count)
        let configured = try PopulationConfiguration(startMs: 0).applying(rates: ["resubscribe_outside_app=0.25"])
        #expect(configured.resubscribeOutsideAppRate == 0.25)
    }

    @Test func faultsAreDeterministicAndFollowTheirRates() throws {
        let someone = try subscriber { $0.environment == "Production" }
        let receipt = someone.receipt(at: Self.start)
        func outcomes(_ faults: FaultConfiguration, count: Int = 200) throws -> [String] {
            let simulator = AppStoreSimulator(population: Self.population, faults: faults, clockMs: Self.start)
            let body = try JSONSerialization.data(withJSONObject: ["receipt-data": receipt, "password": "simulator-shared-secret"])
            return (0..<count).map { _ in
                switch simulator.answer(environment: .production, body: body).reply {
                case .json(let data): return String(decoding: data, as: UTF8.self)
                case .http(let code, _, let headers): return "http \(code) \(headers["Retry-After"] ?? "")"
                case .html: return "html"
                case .drop: return "drop"
                }
            }
        }
        let spread = FaultConfiguration.spread(total: 0.5)
        #expect(abs(spread.totalRate - 0.5) < 1e-9)
        let first = try outcomes(spread)
        #expect(first == (try outcomes(spread)))
        let faulty = first.filter { !$0.contains(#""status":0"#) }.count
        #expect((70...130).contains(faulty), "\(faulty) of 200 at a 50 % rate")
        #expect(try outcomes(FaultConfiguration(rates: [.serviceUnavailable: 1]), count: 5) == Array(repeating: "http 503 ", count: 5))
        #expect(try outcomes(FaultConfiguration(rates: [.rateLimited: 1], retryAfterSeconds: 2), count: 2) == ["http 429 2", "http 429 2"])
        let internalErrors = try outcomes(FaultConfiguration(rates: [.retryableInternalError: 1]), count: 60)
        #expect(internalErrors.contains { $0.contains(#""is-retryable""#) })
        #expect(internalErrors.contains { $0.contains(#""is_retryable""#) })
        #expect(internalErrors.allSatisfy { $0.contains(#""status":211"#) })
        // An outage window: 503 first, then HTML pages, for every request.
        var outage = FaultConfiguration()
        outage.outages = [Self.start...(Self.start + 1000)]
        #expect(try outcomes(outage, count: 4) == ["http 503 ", "html", "http 503 ", "html"])
    }

    @Test func latencySpecifications() {
        #expect(Latency(parsing: "none") == Latency.none)
        #expect(Latency(parsing: "fixed:5ms") == .fixed(.milliseconds(5)))
        #expect(Latency(parsing: "uniform:1ms-20ms") == .uniform(.milliseconds(1), .milliseconds(20)))
        #expect(Latency(parsing: "lognormal:10ms,0.6") == .logNormal(median: .milliseconds(10), sigma: 0.6))
        #expect(Latency(parsing: "uniform:20ms-1ms") == nil)
        #expect(Latency(parsing: "sometimes") == nil)
    }

    @Test func overHTTPDropsAndPagesAreReal() async throws {
        let someone = try subscriber { $0.environment == "Production" }
        let simulator = AppStoreSimulator(population: Self.population, faults: FaultConfiguration(rates: [.droppedConnection: 1]), clockMs: Self.start)
        try await SimulatorServer.withRunning(simulator) { endpoints in
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            defer { _ = client.shutdown() }
            func post() async throws -> (Int, String) {
                var request = HTTPClientRequest(url: endpoints.productionURL)
                request.method = .POST
                request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: ["receipt-data": someone.receipt(at: Self.start), "password": "simulator-shared-secret"])))
                let response = try await client.execute(request, timeout: .seconds(VerifyReceiptTesting.patientTimeout.components.seconds))
                return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 20)))
            }
            await #expect(throws: (any Error).self) { try await post() }
            simulator.setFaults(FaultConfiguration(rates: [.htmlPage: 1]))
            let (code, page) = try await post()
            #expect(code == 200)
            #expect(page.hasPrefix("<!DOCTYPE html>"))
            simulator.setFaults(.none)
            let (okCode, body) = try await post()
            #expect(okCode == 200)
            #expect(body.contains(#""status":0"#))
            let clock = try await client.execute(HTTPClientRequest(url: endpoints.baseURL + "/simulator/clock"), timeout: .seconds(VerifyReceiptTesting.patientTimeout.components.seconds))
            #expect(String(buffer: try await clock.body.collect(upTo: 1 << 16)).contains(#""now_ms" : \#(Self.start)"#))
        }
    }
}
