import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension SimulatorServer {
    /// The renewal-date extension endpoints under both bases: Extend a Subscription Renewal Date
    /// (PUT), Extend Subscription Renewal Dates for All Active Subscribers (POST) and Get Status of
    /// Subscription Renewal Date Extensions (GET), answered by the simulator.
    static func addExtensionRoutes(_ router: Router<BasicRequestContext>, _ simulator: AppStoreSimulator) {
        for (prefix, environment) in [("", SimulatedEnvironment.production), ("sandbox/", .sandbox)] {
            router.put("\(prefix)inApps/v1/subscriptions/extend/:originalTransactionId") { request, context in
                let body = try await request.body.collect(upTo: 1 << 16)
                let answer = simulator.answerExtendRenewalDate(
                    environment: environment, originalTransactionID: context.parameters.get("originalTransactionId") ?? "", body: Data(buffer: body),
                    authorization: request.headers[.authorization])
                return jsonResponse(answer.status, answer.body)
            }
            router.post("\(prefix)inApps/v1/subscriptions/extend/mass") { request, _ in
                let body = try await request.body.collect(upTo: 1 << 16)
                let answer = simulator.answerMassExtension(environment: environment, body: Data(buffer: body), authorization: request.headers[.authorization])
                return jsonResponse(answer.status, answer.body)
            }
            router.get("\(prefix)inApps/v1/subscriptions/extend/mass/:productId/:requestIdentifier") { request, context in
                let answer = simulator.answerMassExtensionStatus(
                    environment: environment, productID: context.parameters.get("productId") ?? "",
                    requestIdentifier: context.parameters.get("requestIdentifier") ?? "", authorization: request.headers[.authorization])
                return jsonResponse(answer.status, answer.body)
            }
        }
    }
}
