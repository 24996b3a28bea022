import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension SimulatorServer {
    /// Get Notification History and the test notification endpoints under both bases, answered
    /// from the simulator's outbox (``AppStoreSimulator/answerNotificationHistory(environment:body:paginationToken:)``).
    /// Without a simulator (the lean stand-in) the history is one empty page: what Apple answers
    /// an app whose notifications were all delivered.
    static func addNotificationHistoryRoutes(_ router: Router<BasicRequestContext>, _ simulator: AppStoreSimulator? = nil) {
        for (prefix, environment) in [("", "Production"), ("sandbox/", "Sandbox")] {
            router.post("\(prefix)inApps/v1/notifications/history") { request, _ in
                guard let simulator else { return jsonResponse(200, Data(#"{"notificationHistory":[],"hasMore":false}"#.utf8)) }
                let body = try await request.body.collect(upTo: 1 << 20)
                let answer = simulator.answerNotificationHistory(
                    environment: environment, body: Data(buffer: body), paginationToken: request.uri.queryParameters.get("paginationToken"))
                return jsonResponse(answer.status, answer.body)
            }
            guard let simulator else { continue }
            router.post("\(prefix)inApps/v1/notifications/test") { _, _ in
                let answer = simulator.requestTestNotification(environment: environment)
                return jsonResponse(answer.status, answer.body)
            }
            router.get("\(prefix)inApps/v1/notifications/test/:token") { _, context in
                let answer = simulator.testNotificationStatus(token: context.parameters.get("token") ?? "")
                return jsonResponse(answer.status, answer.body)
            }
        }
    }

    static func jsonResponse(_ status: Int, _ body: Data) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
