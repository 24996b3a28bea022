import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension SimulatorServer {
    /// `/simulator/…`: read or move the simulated clock, and read a subscriber's truth, so that the
    /// standalone simulator can be driven by hand (curl) or by another program.
    static func addAdminRoutes(_ router: Router<BasicRequestContext>, _ simulator: AppStoreSimulator) {
        router.get("simulator/clock") { _, _ in
            json(["now_ms": simulator.nowMs, "now": iso(simulator.nowMs)])
        }
        // POST /simulator/clock?advance_days=1  or  ?now_ms=1767225600000
        router.post("simulator/clock") { request, _ in
            if let days = request.uri.queryParameters.get("advance_days", as: Double.self) {
                simulator.setClock(simulator.nowMs + Int64(days * 86_400_000))
            } else if let ms = request.uri.queryParameters.get("now_ms", as: Int64.self) {
                simulator.setClock(ms)
            } else {
                return json(["error": "give advance_days=N or now_ms=N"], status: .badRequest)
            }
            return json(["now_ms": simulator.nowMs, "now": iso(simulator.nowMs)])
        }
        // GET /simulator/truth?user_id=sim-user-1
        router.get("simulator/truth") { request, _ in
            guard let userID = request.uri.queryParameters.get("user_id"),
                let subscriber = simulator.population.subscriber(userID: userID)
            else { return json(["error": "unknown user_id"], status: .notFound) }
            let at = simulator.nowMs
            let chains = subscriber.chains.compactMap { chain -> [String: Any]? in
                guard let truth = subscriber.entitlement(originalTransactionID: chain.originalTransactionID, at: at) else { return nil }
                var o: [String: Any] = [
                    "original_transaction_id": truth.originalTransactionID, "product_id": truth.productID,
                    "state": truth.state, "is_entitled": truth.isEntitled, "expires_at": truth.expiresAtMs,
                    "is_in_billing_retry": truth.isInBillingRetry, "auto_renew_status": truth.autoRenewStatus,
                    "auto_renew_product_id": truth.autoRenewProductID, "transaction_id": truth.transactionID,
                    "purchased_at": truth.purchaseMs, "in_app_ownership_type": truth.ownershipType,
                ]
                if let grace = truth.gracePeriodExpiresAtMs { o["grace_period_expires_at"] = grace }
                if let intent = truth.expirationIntent { o["expiration_intent"] = intent }
                if let cancelled = truth.cancelledAtMs { o["cancelled_at"] = cancelled }
                // The order id on the receipt Apple e-mailed for the current transaction (`lookup --order-id`).
                if let order = simulator.orderID(ofTransaction: truth.transactionID) { o["order_id"] = order }
                return o
            }
            return json(["user_id": userID, "environment": subscriber.environment, "now_ms": at, "chains": chains])
        }
        // POST /simulator/arrivals: Get Notification History's requests so far and the most in
        // any one second, and the same for every Server API request (then counted afresh), as
        // the lean stand-in counts the Server API's.
        router.post("simulator/arrivals") { _, _ in
            let (total, most) = simulator.historyArrivals.take()
            let (serverAPI, serverAPIMost) = simulator.serverAPIArrivals.take()
            return json([
                "notification_history_requests": total, "most_in_one_second": most,
                "server_api_requests": serverAPI, "server_api_most_in_one_second": serverAPIMost,
            ])
        }
        router.get("simulator/statistics") { _, _ in
            let stats = simulator.statistics
            return json(["requests": stats.requests, "outcomes": stats.outcomes, "server_api_requests": stats.serverAPIRequests])
        }
    }

    static func json(_ object: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])) ?? Data()
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func iso(_ ms: Int64) -> String {
        Date(timeIntervalSince1970: Double(ms) / 1000).formatted(.iso8601)
    }
}
