import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension SimulatorServer {
    /// Send Consumption Information (PUT, App Store Server API v2) under both bases, answered by the simulator.
    static func addConsumptionRoutes(_ router: Router<BasicRequestContext>, _ simulator: AppStoreSimulator) {
        for (prefix, environment) in [("", SimulatedEnvironment.production), ("sandbox/", .sandbox)] {
            router.put("\(prefix)inApps/v2/transactions/consumption/:transactionId") { request, context in
                let body = try await request.body.collect(upTo: 1 << 16)
                let answer = simulator.answerSendConsumptionInformation(
                    environment: environment, transactionID: context.parameters.get("transactionId") ?? "", body: Data(buffer: body),
                    authorization: request.headers[.authorization])
                var response = answer.status == 202 ? Response(status: .accepted) : jsonResponse(answer.status, answer.body)
                for (name, value) in answer.headers {
                    if let field = HTTPField.Name(name) { response.headers[field] = value }
                }
                return response
            }
        }
    }
}
