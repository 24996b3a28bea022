import HTTPTypes
import Hummingbird
import NIOCore

extension SimulatorServer {
    /// Get Notification History under both bases. The simulator sends no notifications yet (its
    /// pushes are issue 24's next piece), so every reading is one empty page: what Apple answers
    /// an app whose notifications were all delivered.
    static func addNotificationHistoryRoutes(_ router: Router<BasicRequestContext>) {
        for prefix in ["", "sandbox/"] {
            router.post("\(prefix)inApps/v1/notifications/history") { _, _ in
                var headers = HTTPFields()
                headers[.contentType] = "application/json"
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: #"{"notificationHistory":[],"hasMore":false}"#)))
            }
        }
    }
}
