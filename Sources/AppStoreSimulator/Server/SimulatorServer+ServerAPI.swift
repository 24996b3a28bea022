import Foundation
import HTTPTypes
import Hummingbird

extension SimulatorServer {
    /// The App Store Server API: `GET {base}/inApps/v1/subscriptions/{transactionId}` and
    /// `GET {base}/inApps/v2/history/{transactionId}`, the production base at the root and the
    /// sandbox base under `/sandbox`, as Apple's two hosts.
    static func addServerAPIRoutes(_ router: Router<BasicRequestContext>, _ simulator: AppStoreSimulator) {
        for (prefix, environment) in [("", SimulatedEnvironment.production), ("sandbox/", .sandbox)] {
            for endpoint in ServerAPIRequest.Endpoint.allCases {
                router.get("\(prefix)\(endpoint.rawValue)/:transactionId") { request, context in
                    var query: [String: [String]] = [:]
                    for (name, value) in request.uri.queryParameters { query[String(name), default: []].append(String(value)) }
                    let apiRequest = ServerAPIRequest(
                        environment: environment, endpoint: endpoint, transactionID: context.parameters.get("transactionId") ?? "",
                        authorization: request.headers[.authorization], query: query)
                    return try await render(simulator.answerServerAPI(apiRequest))
                }
            }
        }
    }
}
