import Foundation

/// The outbound events as `status-poller events list` prints them.
extension StoredEvent {
    /// The table's header.
    package static let tableHeader = "written (UTC)          event                                 type                     endpoint     state      tries  last"

    /// One event (and its delivery to one endpoint) as a row of the table.
    package var line: String {
        [
            Display.time(atMs).padded(22), eventID.padded(37), type.padded(24), (endpoint ?? "-").padded(12),
            (state ?? "-").padded(10), String(attempts).padded(6), lastError ?? lastStatus.map { "HTTP \($0)" } ?? "-",
        ].joined(separator: " ")
    }

    /// The events as one JSON document, keys sorted.
    package static func json(_ events: [StoredEvent]) throws -> String {
        let rows: [[String: Any]] = events.map { e in
            var o: [String: Any] = ["event_id": e.eventID, "type": e.type, "user_id": e.userID, "written_at": Display.time(e.atMs), "attempts": e.attempts]
            if let endpoint = e.endpoint { o["endpoint"] = endpoint }
            if let state = e.state { o["state"] = state }
            if let status = e.lastStatus { o["last_status"] = status }
            if let error = e.lastError { o["last_error"] = error }
            return o
        }
        return String(decoding: try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys]), as: UTF8.self)
    }
}
