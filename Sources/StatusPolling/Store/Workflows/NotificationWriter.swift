import EntitlementCore

/// Records and applies a batch of received notifications in the caller's transaction, on either
/// dialect, with the effect of receiving them one by one in order: every notification claimed by
/// id first (a repeat in the batch, or one recorded before and matched, is a `duplicate`), then
/// in rounds that no earlier write of their own can change (``NotificationMatch/rounds(_:)``):
/// the rows owning a round's chains read at once, each notification matched, its refund request
/// queued (``ConsumptionQueue``) with the row as it stood, its effect planned and the round's
/// results written by ``PlanWriter``; last, every outcome recorded and the changes' outbound
/// events added. PostgreSQL claims and settles a batch in one statement each and writes a round
/// in a handful; with distinct chains a batch is one round.
package struct NotificationWriter<Session: SQLSession> {
    private let session: Session
    private let dialect: SQLDialect
    private let ingest: NotificationIngest
    private let nowMs: Int64
    private var writer: PlanWriter<Session>

    package init(session: Session, dialect: SQLDialect, leases: Bool, outbox: Bool, ingest: NotificationIngest, nowMs: Int64) {
        self.session = session
        self.dialect = dialect
        self.ingest = ingest
        self.nowMs = nowMs
        writer = PlanWriter(session: session, dialect: dialect, leases: leases, releasing: nil, outbox: outbox)
    }

    /// Each notification's outcome, in order.
    package mutating func receive(_ notifications: [ReceivedNotification]) async throws -> [NotificationOutcome] {
        var outcomes = [NotificationOutcome?](repeating: nil, count: notifications.count)
        var seen: Set<String> = []
        for (index, n) in notifications.enumerated() where !seen.insert(n.id).inserted { outcomes[index] = .duplicate }
        var claimed: Set<String> = []
        for statement in NotificationsSQL.claim(dialect, notifications.indices.filter { outcomes[$0] == nil }.map { notifications[$0] }) {
            claimed.formUnion(try await session.rows(statement) { row -> String in try row.column() })
        }
        for index in notifications.indices where outcomes[index] == nil && !claimed.contains(notifications[index].id) { outcomes[index] = .duplicate }

        let fresh = notifications.indices.filter { outcomes[$0] == nil }
        var rowIDs: [Int: Int64] = [:], statusAgrees: [Int: Bool] = [:]
        for positions in NotificationMatch.rounds(fresh.map { notifications[$0] }) {
            let round = fresh[positions]
            let chains = Array(Set(round.compactMap { notifications[$0].originalTransactionID }))
            var owners: [String: SubscriptionRow] = [:]
            if !chains.isEmpty {
                for statement in NotificationsSQL.owners(of: chains, dialect) {
                    for row in try await session.rows(statement, { try SubscriptionRowSQL.row(&$0) }) {
                        if let chain = row.state.originalTransactionID { owners[chain] = row }
                    }
                }
            }
            var consumption: [SQLStatement] = [], pending: [(index: Int, result: ResultBatch.Result)] = []
            for index in round {
                let n = notifications[index]
                let row = try await NotificationMatch.row(for: n) { lookup in
                    switch lookup {
                    case .chain(let chain): return owners[chain]
                    case .token(let token): return try await session.rows(NotificationsSQL.adoptable(token: token, dialect)) { try SubscriptionRowSQL.row(&$0) }.first
                    }
                }
                consumption += ConsumptionQueue.statements(for: n, row: row, dialect)
                guard let row else {
                    outcomes[index] = NotificationMatch.outcomeWithoutRow(n)
                    continue
                }
                rowIDs[index] = row.id
                switch ingest.effect(of: n, on: row, nowMs: nowMs) {
                case .settled(let outcome): outcomes[index] = outcome
                case .write(let result): pending.append((index, result))
                }
            }
            // Refund requests queued (and decisions recorded) with the rows as they stood, before
            // the notifications' confirmations clear a failure standing on them.
            for statement in consumption { try await session.execute(statement) }
            let (plans, _) = try await writer.write(pending.map(\.result))
            for (entry, plan) in zip(pending, plans) {
                outcomes[entry.index] = NotificationIngest.outcome(of: plan)
                statusAgrees[entry.index] = plan.statusAgrees
            }
        }
        let settlements = fresh.map { index in
            NotificationsSQL.Settlement(notifications[index], outcome: outcomes[index]!, subscriptionID: rowIDs[index], statusAgrees: statusAgrees[index])
        }
        for statement in NotificationsSQL.settle(dialect, settlements) { try await session.execute(statement) }
        try await writer.writeOutbox()
        return outcomes.map { $0! }
    }
}
