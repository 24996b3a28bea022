import Foundation

extension AppStoreSimulator {
    /// Turns on App Store Server Notifications of `version` (1 or 2): from the current clock on,
    /// every lifecycle event is due at its instant (``NotificationPusher`` posts them).
    public func sendNotifications(version: Int, faults: NotificationFaults = .none) {
        let from = nowMs
        outbox.withLock { $0 = NotificationOutbox(version: version, faults: faults, from: from) }
    }

    /// The earliest notification try due at or before `ms`; nil when none is (or none are sent).
    public func nextNotificationAttempt(through ms: Int64) -> NotificationOutbox.Attempt? {
        outbox.withLock { outbox in outbox?.nextAttempt(through: ms, population: population, pki: pki) }
    }

    /// What became of a try (the next one is scheduled on Apple's retry schedule).
    public func recordNotificationAttempt(_ attempt: NotificationOutbox.Attempt, result: SendAttempt.Result) {
        outbox.withLock { $0?.record(attempt, result: result) }
    }

    /// Every notification scheduled so far, with its attempts.
    public var notificationRecords: [NotificationOutbox.Record] { outbox.withLock { $0?.records ?? [] } }

    /// Get Notification History (`POST …/notifications/history`): V2 notifications whose first
    /// attempt was in [startDate, endDate) and not after the clock, oldest first, 20 a page;
    /// `onlyFailures` keeps those not delivered yet. A page token names the next record and the
    /// body it was made for: another body is refused as Apple does (4000017).
    public func answerNotificationHistory(environment: String, body: Data, paginationToken: String?) -> (status: Int, body: Data) {
        historyArrivals.arrived()
        guard let request = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
            let start = (request["startDate"] as? NSNumber)?.int64Value, let end = (request["endDate"] as? NSNumber)?.int64Value
        else { return (400, Self.serialize(["errorCode": 4000000, "errorMessage": "Invalid request."])) }
        guard start <= end else { return (400, Self.serialize(["errorCode": 4000028, "errorMessage": "Start date after end date."])) }
        let onlyFailures = request["onlyFailures"] as? Bool ?? false
        let digest = String(stableHash(String(decoding: body, as: UTF8.self)), radix: 36)
        var offset = 0
        if let paginationToken {
            let parts = paginationToken.split(separator: ".")
            guard parts.count == 2, let from = Int(parts[0]) else { return (400, Self.serialize(["errorCode": 4000016, "errorMessage": "Invalid pagination token."])) }
            guard parts[1] == digest else { return (400, Self.serialize(["errorCode": 4000017, "errorMessage": "Pagination token expired."])) }
            offset = from
        }
        let clock = nowMs
        // One reading's pages share its list, as Apple's token names a reading: the list is made
        // for its first page (or when the outbox moved on) and kept for the rest.
        let key = "\(environment)|\(digest)|\(clock)"
        let matching = outbox.withLock { outbox -> [NotificationOutbox.Record] in
            guard let outbox else { return [] }
            if let cached = historyReading.withLock({ $0 }), cached.key == key, cached.count == outbox.records.count { return cached.records }
            let records = outbox.records.filter { record in
                record.version == 2 && record.event.map { population.subscribers[$0.subscriberIndex].environment == environment } ?? true
                    && record.firstAttemptMs >= start && record.firstAttemptMs < min(end, clock + 1) && !record.attempts.isEmpty
                    && (!onlyFailures || !record.delivered)
            }.sorted { ($0.firstAttemptMs, $0.id) < ($1.firstAttemptMs, $1.id) }
            historyReading.withLock { $0 = (key, outbox.records.count, records) }
            return records
        }
        let page = matching.dropFirst(offset).prefix(ServerAPIResponseBuilder.pageSize)
        // Written by hand: a page is hundreds of kilobytes of JWS, which need no escaping.
        let records = page.map { record in
            #"{"sendAttempts":\#(Self.attemptsJSON(record.attempts)),"signedPayload":"\#(record.signedPayload)"}"#
        }
        let more = offset + page.count < matching.count
        let token = more ? #","paginationToken":"\#(offset + page.count).\#(digest)""# : ""
        return (200, Data(#"{"hasMore":\#(more),"notificationHistory":[\#(records.joined(separator: ","))]\#(token)}"#.utf8))
    }

    static func attemptsJSON(_ attempts: [SendAttempt]) -> String {
        "[" + attempts.map { #"{"attemptDate":\#($0.atMs),"sendAttemptResult":"\#($0.result.rawValue)"}"# }.joined(separator: ",") + "]"
    }

    /// Request a Test Notification: a `TEST` due now; its token is its id.
    public func requestTestNotification(environment: String) -> (status: Int, body: Data) {
        let clock = nowMs
        let token = outbox.withLock { outbox -> String? in
            outbox?.scheduleTest(at: clock, environment: environment, configuration: population.configuration, pki: pki)
        }
        guard let token else { return (404, Self.serialize(["errorCode": 4040007, "errorMessage": "No notification URL configured."])) }
        return (200, Self.serialize(["testNotificationToken": token]))
    }

    /// Get Test Notification Status: 404 until the first attempt, then the payload and its attempts.
    public func testNotificationStatus(token: String) -> (status: Int, body: Data) {
        guard let record = outbox.withLock({ $0?.record(id: token) }), record.event == nil, !record.attempts.isEmpty
        else { return (404, Self.serialize(["errorCode": 4040008, "errorMessage": "Test notification not found."])) }
        return (200, Data(#"{"sendAttempts":\#(Self.attemptsJSON(record.attempts)),"signedPayload":"\#(record.signedPayload)"}"#.utf8))
    }
}
