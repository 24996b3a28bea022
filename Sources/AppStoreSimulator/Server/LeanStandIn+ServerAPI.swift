import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension LeanStandIn {
    /// The Server API routes of the stand-in: the two endpoints a run asks, under both bases.
    func addServerAPIRoutes(_ router: Router<BasicRequestContext>) {
        // The Server API requests received, and the most in any one second (then counted afresh).
        router.post("simulator/arrivals") { _, _ in
            let (total, most) = serverAPIArrivals.take()
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: #"{"server_api_requests":\#(total),"most_in_one_second":\#(most)}"#)))
        }
        SimulatorServer.addNotificationHistoryRoutes(router)
        for (prefix, environment) in [("", "Production"), ("sandbox/", "Sandbox")] {
            for endpoint in [ServerAPIRequest.Endpoint.allSubscriptionStatuses, .transactionHistory] {
                router.get("\(prefix)\(endpoint.rawValue)/:transactionId") { request, context in
                    serverAPIArrivals.arrived()
                    let id = context.parameters.get("transactionId") ?? ""
                    let (status, body) = serverAPIAnswer(endpoint, id: id, environment: environment, authorization: request.headers[.authorization], now: Date())
                    if latency > .zero { try await Task.sleep(for: latency) }
                    var headers = HTTPFields()
                    if !body.isEmpty { headers[.contentType] = "application/json" }
                    return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
                }
            }
        }
    }

    /// Status and body for one request: 401 for a token the full simulator would refuse, 404
    /// 4040010 for an id that is not a number, else one active monthly subscription whose
    /// transaction id is `id`, signed the first time it is asked for and cached after.
    func serverAPIAnswer(_ endpoint: ServerAPIRequest.Endpoint, id: String, environment: String, authorization: String?, now: Date) -> (Int, Data) {
        guard acceptsCached(authorization, now: now) else { return (401, Data()) }
        guard !id.isEmpty, id.count <= 20, id.allSatisfy(\.isASCII), id.allSatisfy(\.isNumber) else {
            return (404, Data(#"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#.utf8))
        }
        let body = cache.answer("\(environment)|\(endpoint.rawValue)|\(id)") {
            let ms = Int64(now.timeIntervalSince1970 * 1000)
            let configuration = PopulationConfiguration(startMs: ms, bundleID: bundleID, appAppleID: appAppleID)
            var head = ServerAPIResponseBuilder.head(environment: environment, configuration: configuration)
            let product = "com.example.premium.monthly"
            let transaction: [String: Any] = [
                "transactionId": id, "originalTransactionId": id, "webOrderLineItemId": "9\(id)", "bundleId": bundleID,
                "productId": product, "subscriptionGroupIdentifier": "20000001", "purchaseDate": ms - 5 * 86_400_000,
                "originalPurchaseDate": ms - 5 * 86_400_000, "expiresDate": ms + 25 * 86_400_000, "quantity": 1,
                "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED", "signedDate": ms,
                "environment": environment, "transactionReason": "PURCHASE", "storefront": "USA", "storefrontId": "143441",
                "price": 9990, "currency": "USD",
            ]
            let signedTransaction = pki.sign(transaction)
            switch endpoint {
            case .allSubscriptionStatuses:
                let renewal: [String: Any] = [
                    "originalTransactionId": id, "productId": product, "autoRenewProductId": product, "autoRenewStatus": 1,
                    "signedDate": ms, "environment": environment, "recentSubscriptionStartDate": ms - 5 * 86_400_000,
                    "renewalDate": ms + 25 * 86_400_000,
                ]
                let item: [String: Any] = ["status": 1, "originalTransactionId": id, "signedTransactionInfo": signedTransaction, "signedRenewalInfo": pki.sign(renewal)]
                head["data"] = [["subscriptionGroupIdentifier": "20000001", "lastTransactions": [item]] as [String: Any]]
            case .transactionHistory, .transactionInfo, .orderLookup, .refundHistory:
                head["signedTransactions"] = [signedTransaction]
                head["hasMore"] = false
                head["revision"] = HistoryRevision(offset: 1).token
            }
            return AppStoreSimulator.serializeServerAPI(head)
        }
        return (200, body)
    }

    private func acceptsCached(_ authorization: String?, now: Date) -> Bool {
        guard let authorization else { return false }
        if cache.knows(token: authorization, now: now) { return true }
        guard serverAPIKey.accepts(authorization: authorization, bundleID: bundleID, now: now),
            let claims = authorization.split(separator: ".").dropFirst().first.flatMap({ Base64URL.decode($0) }),
            let object = (try? JSONSerialization.jsonObject(with: claims)) as? [String: Any],
            let exp = SimulatedInAppPurchaseKey.number(object["exp"])
        else { return false }
        cache.remember(token: authorization, expiresAt: exp)
        return true
    }
}
