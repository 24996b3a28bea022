/// The SQL of the event feed's deliveries (`event_endpoints`, `event_deliveries`) that both stores
/// run, each step a statement the store runs in its transaction (``EventOutbox`` says the steps).
public enum EventDeliverySQL {
    // MARK: Fan-out

    public static func ensureEndpoint(_ endpoint: String) -> SQLStatement {
        "INSERT INTO event_endpoints (endpoint) VALUES (\(endpoint)) ON CONFLICT (endpoint) DO NOTHING"
    }

    /// The last event added to `endpoint`'s deliveries (SQLite's fan-out, in its write transaction).
    public static func fannedThrough(_ endpoint: String) -> SQLStatement {
        "SELECT fanned_through FROM event_endpoints WHERE endpoint = \(endpoint)"
    }

    /// The newest event. Ids follow commits (one writer in SQLite; the outbox lock in PostgreSQL),
    /// so every event up to it is visible once it is.
    public static let latestEvent: SQLStatement = "SELECT max(id) FROM outbound_events"

    /// A row for each delivery added.
    public static func addDeliveries(_ endpoint: String, after: Int64, through: Int64, dueAtMs: Int64) -> SQLStatement {
        """
        INSERT INTO event_deliveries (endpoint, event, user_id, next_attempt_at, queued_at)
        SELECT \(endpoint), id, user_id, \(dueAtMs), \(dueAtMs) FROM outbound_events WHERE id > \(after) AND id <= \(through)
        ON CONFLICT (endpoint, event) DO NOTHING
        RETURNING 1
        """
    }

    public static func setFannedThrough(_ endpoint: String, _ through: Int64) -> SQLStatement {
        "UPDATE event_endpoints SET fanned_through = \(through) WHERE endpoint = \(endpoint)"
    }

    /// PostgreSQL's fan-out after ``ensureEndpoint(_:)``, in one statement (one round trip, not
    /// the seven of a transaction of its steps; what a busy fan-out costs is its insert, 18–20 ms
    /// for 100 ms of a burst either way): the endpoint's row locked, so two deliverers add each
    /// event once (the second waits, then reads the first's `fanned_through`); returns how many.
    public static func fanOutPostgres(_ endpoint: String, dueAtMs: Int64) -> SQLStatement {
        """
        WITH endpoint AS (SELECT fanned_through FROM event_endpoints WHERE endpoint = \(endpoint) FOR UPDATE),
        latest AS (SELECT max(id) AS id FROM outbound_events),
        added AS (
            INSERT INTO event_deliveries (endpoint, event, user_id, next_attempt_at, queued_at)
            SELECT \(endpoint), o.id, o.user_id, \(dueAtMs), \(dueAtMs) FROM outbound_events AS o, endpoint AS e, latest AS l
            WHERE o.id > e.fanned_through AND o.id <= l.id
            ON CONFLICT (endpoint, event) DO NOTHING
            RETURNING 1
        ),
        moved AS (
            UPDATE event_endpoints SET fanned_through = l.id FROM latest AS l, endpoint AS e
            WHERE event_endpoints.endpoint = \(endpoint) AND l.id > e.fanned_through
        )
        SELECT count(*) FROM added
        """
    }

    // MARK: Taking and settling

    /// Each user's oldest pending delivery to `endpoint`, when it is due and free: the heads, in
    /// event order, found by walking the pending deliveries in that order until `limit` are found.
    ///
    /// SQLite is told to walk so (`INDEXED BY`): without statistics its planner took the primary
    /// key, which walks every delivered row for each candidate, and a backlog of 5,000 drained at
    /// 400 a second with SQLite at 52 % of the deliverer's CPU. A candidate is a head when it is
    /// its user's first pending event, a correlated subquery run per candidate with the user
    /// bound. PostgreSQL has no such hint: ``walkPostgres(_:from:)`` walks explicitly.
    public static func heads(_ endpoint: String, nowMs: Int64, limit: Int) -> SQLStatement {
        """
        SELECT d.event FROM event_deliveries AS d INDEXED BY event_deliveries_due
        WHERE d.endpoint = \(endpoint) AND d.state = 'pending' AND d.next_attempt_at <= \(nowMs)
            AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= \(nowMs))
            AND d.event = (SELECT h.event FROM event_deliveries AS h INDEXED BY event_deliveries_pending
                WHERE h.endpoint = d.endpoint AND h.user_id = d.user_id AND h.state = 'pending' ORDER BY h.event LIMIT 1)
        ORDER BY d.event LIMIT \(limit)
        """
    }

    /// PostgreSQL's walk of the pending deliveries in event order, a recursive query of one index
    /// probe a step, from `from` (at or below the lowest pending delivery; 0: the beginning, which
    /// steps over the index entries of delivered rows until vacuum) — SQLite's plan, spelled out. Given
    /// the same question as SQLite, PostgreSQL's planner estimated few heads, read the whole table
    /// (delivered rows included) and sorted it: 37 ms a take from 6,000 pending events of 400
    /// users, 69 ms from 25,600 users with one each, and worse as delivered rows piled up in a
    /// long run, until the deliverer fell behind for good. Walked: 6 and 2.3 ms, with or without
    /// statistics. (As `NOT EXISTS` an earlier event, 1.5 ms with fresh statistics, but ~1,000
    /// events/s in a run whose statistics were taken early.)
    private static func walkPostgres(_ endpoint: String, from: Int64) -> SQLStatement {
        """
        walk (event, user_id, next_attempt_at, lease_expires_at) AS (
            (SELECT event, user_id, next_attempt_at, lease_expires_at FROM event_deliveries
                WHERE endpoint = \(endpoint) AND state = 'pending' AND event >= \(from) ORDER BY event LIMIT 1)
            UNION ALL
            (SELECT n.* FROM walk AS w CROSS JOIN LATERAL (
                SELECT event, user_id, next_attempt_at, lease_expires_at FROM event_deliveries
                WHERE endpoint = \(endpoint) AND state = 'pending' AND event > w.event ORDER BY event LIMIT 1) AS n)
        )
        """
    }

    /// PostgreSQL's heads: the walk's deliveries that are due, free and their user's first pending, until `limit`.
    private static func headsPostgres(_ endpoint: String, nowMs: Int64, limit: Int) -> SQLStatement {
        """
        SELECT w.event FROM walk AS w
        WHERE w.next_attempt_at <= \(nowMs) AND (w.lease_expires_at IS NULL OR w.lease_expires_at <= \(nowMs))
            AND w.event = (SELECT h.event FROM event_deliveries AS h
                WHERE h.endpoint = \(endpoint) AND h.user_id = w.user_id AND h.state = 'pending' ORDER BY h.event LIMIT 1)
        LIMIT \(limit)
        """
    }

    /// Leases the heads still free (another deliverer may have taken one meanwhile); their ids.
    /// SQLite's take, in the write transaction that read the heads; PostgreSQL takes in one
    /// statement (``takePostgres(_:owner:nowMs:untilMs:limit:from:)``).
    public static func lease(_ endpoint: String, events: [Int64], owner: String, nowMs: Int64, untilMs: Int64) -> SQLStatement {
        """
        UPDATE event_deliveries SET lease_owner = \(owner), lease_expires_at = \(untilMs)
        WHERE endpoint = \(endpoint) AND event IN (\(list: events)) AND state = 'pending'
            AND (lease_expires_at IS NULL OR lease_expires_at <= \(nowMs))
        RETURNING event
        """
    }

    /// PostgreSQL's take in one statement (one round trip): the heads leased, with their events,
    /// read by ``delivery(_:)``, and last the lowest pending delivery (where the next walk may start). Two deliverers running it at once: the second waits on the rows
    /// the first leases, then finds their leases taken and leaves them. The heads are materialised:
    /// as a subquery of the `UPDATE` the planner ran them again for every pending row (seconds
    /// for a backlog of 1,000).
    public static func takePostgres(_ endpoint: String, owner: String, nowMs: Int64, untilMs: Int64, limit: Int, from: Int64) -> SQLStatement {
        """
        WITH RECURSIVE \(walkPostgres(endpoint, from: from)),
        heads AS MATERIALIZED (\(headsPostgres(endpoint, nowMs: nowMs, limit: limit))),
        taken AS (
            UPDATE event_deliveries SET lease_owner = \(owner), lease_expires_at = \(untilMs)
            WHERE endpoint = \(endpoint) AND event IN (SELECT event FROM heads) AND state = 'pending'
                AND (lease_expires_at IS NULL OR lease_expires_at <= \(nowMs))
            RETURNING event, attempts, queued_at
        )
        SELECT t.event, o.event_id, o.user_id, o.body, t.attempts, o.at, coalesce(t.queued_at, o.at), (SELECT event FROM walk LIMIT 1)
        FROM taken AS t JOIN outbound_events AS o ON o.id = t.event ORDER BY t.event
        """
    }

    /// The leased deliveries with their events, read by ``delivery(_:)``: SQLite's take, after
    /// ``lease(_:events:owner:nowMs:untilMs:)``.
    public static func deliveries(_ endpoint: String, events: [Int64]) -> SQLStatement {
        """
        SELECT d.event, o.event_id, o.user_id, o.body, d.attempts, o.at, coalesce(d.queued_at, o.at)
        FROM event_deliveries AS d JOIN outbound_events AS o ON o.id = d.event
        WHERE d.endpoint = \(endpoint) AND d.event IN (\(list: events)) ORDER BY d.event
        """
    }

    public static func delivery(_ row: inout some ColumnReader) throws -> EventDelivery {
        EventDelivery(
            outboxID: try row.column(), eventID: try row.column(), userID: try row.column(), body: try row.column(),
            attempts: Int(try row.column() as Int64), writtenAtMs: try row.column(), queuedAtMs: try row.column())
    }

    /// The successes among `outcomes` in one statement (most of a busy deliverer's outcomes):
    /// each delivery delivered at its own instant with its own status, whoever holds the lease;
    /// nil when there is none. The failures go one by one (``settle(_:endpoint:owner:)``).
    public static func settleDelivered(_ outcomes: [DeliveryOutcome], endpoint: String) -> SQLStatement? {
        let rows = outcomes.filter { $0.result == .delivered }.map { outcome -> SQLStatement in
            "(\(outcome.outboxID), \(outcome.atMs), \(outcome.status))"
        }
        guard !rows.isEmpty else { return nil }
        return """
            UPDATE event_deliveries SET state = 'delivered', delivered_at = v.at, attempts = attempts + 1, last_status = v.status,
                last_error = NULL, lease_owner = NULL, lease_expires_at = NULL
            FROM (SELECT column1 AS event, column2 AS at, column3 AS status FROM (VALUES \(joined: rows)) AS x) AS v
            WHERE event_deliveries.endpoint = \(endpoint) AND event_deliveries.event = v.event AND event_deliveries.state = 'pending'
            """
    }

    /// One outcome on its delivery: a success whoever holds the lease, a failure only by its holder.
    public static func settle(_ outcome: DeliveryOutcome, endpoint: String, owner: String) -> SQLStatement {
        let release: SQLStatement = """
            attempts = attempts + 1, last_status = \(outcome.status), last_error = \(outcome.error), lease_owner = NULL, lease_expires_at = NULL
            """
        switch outcome.result {
        case .delivered:
            return """
                UPDATE event_deliveries SET state = 'delivered', delivered_at = \(outcome.atMs), \(release)
                WHERE endpoint = \(endpoint) AND event = \(outcome.outboxID) AND state = 'pending'
                """
        case .retry(let next):
            return """
                UPDATE event_deliveries SET next_attempt_at = \(next), \(release)
                WHERE endpoint = \(endpoint) AND event = \(outcome.outboxID) AND state = 'pending' AND lease_owner = \(owner)
                """
        case .dead:
            return """
                UPDATE event_deliveries SET state = 'dead', \(release)
                WHERE endpoint = \(endpoint) AND event = \(outcome.outboxID) AND state = 'pending' AND lease_owner = \(owner)
                """
        }
    }

    public static func nextDue(_ endpoint: String) -> SQLStatement {
        "SELECT min(next_attempt_at) FROM event_deliveries WHERE endpoint = \(endpoint) AND state = 'pending'"
    }

    // MARK: The operator's commands

    /// Events with their deliveries, newest first, read by ``stored(_:)``.
    public static func list(_ filter: EventFilter, limit: Int) -> SQLStatement {
        let condition: String
        switch filter {
        case .all: condition = ""
        case .pending: condition = "WHERE d.state = 'pending'"
        case .failed: condition = "WHERE d.state = 'dead'"
        }
        return """
            SELECT o.id, o.event_id, o.type, o.user_id, o.at, d.endpoint, d.state, COALESCE(d.attempts, 0), d.last_status, d.last_error
            FROM outbound_events AS o LEFT JOIN event_deliveries AS d ON d.event = o.id \(unescaped: condition)
            ORDER BY o.id DESC, d.endpoint LIMIT \(limit)
            """
    }

    public static func stored(_ row: inout some ColumnReader) throws -> StoredEvent {
        StoredEvent(
            outboxID: try row.column(), eventID: try row.column(), type: try row.column(), userID: try row.column(), atMs: try row.column(),
            endpoint: try row.column(), state: try row.column(), attempts: Int(try row.column() as Int64), lastStatus: (try row.column() as Int64?).map(Int.init),
            lastError: try row.column())
    }

    public static func replay(_ selection: ReplaySelection, endpoint: String?, nowMs: Int64) -> SQLStatement {
        let events: SQLStatement
        switch selection {
        case .id(let id): events = "SELECT id FROM outbound_events WHERE event_id = \(id)"
        case .since(let ms): events = "SELECT id FROM outbound_events WHERE at >= \(ms)"
        }
        let onEndpoint: SQLStatement = endpoint.map { " AND endpoint = \($0)" } ?? ""
        return """
            UPDATE event_deliveries SET state = 'pending', attempts = 0, next_attempt_at = \(nowMs), delivered_at = NULL,
                last_status = NULL, last_error = NULL, lease_owner = NULL, lease_expires_at = NULL
            WHERE event IN (\(events))\(onEndpoint)
            """
    }

    /// Events older than `beforeMs` that no delivery waits for (their deliveries go with them).
    public static func prune(writtenBeforeMs: Int64) -> SQLStatement {
        """
        DELETE FROM outbound_events WHERE at < \(writtenBeforeMs)
            AND NOT EXISTS (SELECT 1 FROM event_deliveries AS d WHERE d.event = outbound_events.id AND d.state = 'pending')
        """
    }

    public static let countsByState: SQLStatement = "SELECT state, count(*) FROM event_deliveries GROUP BY state"
    public static let eventCount: SQLStatement = "SELECT count(*) FROM outbound_events"
}
