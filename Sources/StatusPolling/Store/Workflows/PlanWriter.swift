import EntitlementCore

/// Writes a batch of results in the caller's transaction, on either dialect: the batch's rows and
/// the owners of the chains they adopt read first (PostgreSQL's in one statement each, the rows
/// locked; SQLite's a compiled statement per key), then each result
/// planned in order (``RowUpdatePlan``, the rules every writer shares) on the rows and the chains'
/// owners as the batch leaves them, so an earlier result counts; a row's second result is planned
/// on the row as its first left it (read again). SQLite writes each plan as it goes; PostgreSQL
/// gathers them and writes each kind in one statement (``PlanWriteSQL``), its outbound events last,
/// under the outbox's lock (``writeOutbox()``). The answers' transactions go to the ledger in the
/// same transaction (``LedgerSQL``).
package struct PlanWriter<Session: SQLSession> {
    let session: Session
    let dialect: SQLDialect
    /// The table holds leases (shared work).
    let leases: Bool
    /// The run whose leases the rows it writes give up, in the same statement as their results.
    let releasing: Int64?
    /// Whether each contract change's outbound event is written (``SQLStore/writesOutbox``).
    let outbox: Bool

    private var verifiedRows: [String] = [], failureRows: [String] = [], audit: [PlanWriteSQL.AuditRow] = []
    /// The outbound events of the batch's changes, as PostgreSQL inserts them last.
    private var outboxRows: [String] = []
    /// The ledger entries PostgreSQL gathered, by precedence and transaction id (one statement
    /// may not touch a row twice: an answer listing an id twice keeps its newest).
    private var ledgerRows: [LedgerEntry.Precedence: [String: (asOfMs: Int64, json: String)]] = [:]

    package init(session: Session, dialect: SQLDialect, leases: Bool, releasing: Int64?, outbox: Bool) {
        self.session = session
        self.dialect = dialect
        self.leases = leases
        self.releasing = releasing
        self.outbox = outbox
    }

    /// Plans and writes `results`; their plans in order, and the ids whose results were written
    /// (the others' leases belong to another run).
    package mutating func write(_ results: [ResultBatch.Result]) async throws -> (plans: [RowUpdatePlan], written: [Int64]) {
        guard !results.isEmpty else { return ([], []) }
        // Each row read against the receipt its first result sent; a second result reads it again.
        var sent: [Int64: String] = [:]
        for result in results.reversed() { sent[result.subscriptionID] = Self.receiptSent(result) }
        var current = try await lockedRows(Array(Set(results.map(\.subscriptionID))).sorted(), sent: sent)
        try await readLedgerRevocations(of: results, into: &current)
        var owners = try await owners(of: results, current: current)
        var plans: [RowUpdatePlan] = [], written: [Int64] = [], planned: Set<Int64> = []
        for result in results {
            let id = result.subscriptionID
            if !planned.insert(id).inserted {
                try await flush()
                current[id] = try await lockedRows([id], sent: Self.receiptSent(result).map { [id: $0] } ?? [:])[id]
                try await readLedgerRevocations(of: [result], into: &current)
            }
            let plan = RowUpdatePlan(result, current: current[id], ownerOf: { owners[$0] })
            plans.append(plan)
            if plan.isWritten { written.append(id) }
            try await write(plan)
            if case .verified(let state, _, _, _) = plan.columns {
                // Later results of the batch see this row's chain as the transaction will.
                if let released = current[id]?.state.originalTransactionID { owners[released] = nil }
                if let chain = state.originalTransactionID { owners[chain] = id }
            }
            guard let userID = plan.userID else { continue }
            for chain in plan.discovered {
                let newID: Int64 = try await session.rows(PlanWriteSQL.enrollDiscovered(chain, userID: userID, plan: plan)) { try $0.column() }[0]
                if let otid = chain.originalTransactionID {
                    owners[otid] = newID
                    for var entry in plan.ledger where entry.subscriptionID == nil && entry.transaction.originalTransactionID == otid {
                        entry.subscriptionID = newID
                        try await write(entry)
                    }
                }
                try await record(.init(subscriptionID: newID, userID: userID, plan: plan, event: .init(reason: .discovered, old: .unverified, new: chain)))
            }
        }
        try await flush()
        return (plans, written)
    }

    /// Adds the batch's outbound events (PostgreSQL; SQLite wrote each beside its audit row), as
    /// the transaction's last statements: see ``OutboxSQL``.
    package mutating func writeOutbox() async throws {
        guard !outboxRows.isEmpty else { return }
        try await session.execute(OutboxSQL.lock)
        let ids = try await session.rows(OutboxSQL.insertSet(outboxRows)) { row -> Int64 in try row.column() }.sorted()
        try await session.execute(OutboxSQL.notify(ids))
        outboxRows = []
    }

    /// The rows, PostgreSQL's in one statement (a round trip each cost more than the statement),
    /// SQLite's one by one (each a statement kept compiled); each holding `sent[id]` or not.
    private func lockedRows(_ ids: [Int64], sent: [Int64: String]) async throws -> [Int64: RowUpdatePlan.LockedRow] {
        let statements = dialect == .sqlite ? ids.map(PlanWriteSQL.lockedRow) : [PlanWriteSQL.lockedRows(dialect, ids: ids, leases: leases)]
        var rows: [Int64: RowUpdatePlan.LockedRow] = [:]
        for statement in statements {
            for (id, row) in try await session.rows(statement, { try PlanWriteSQL.locked(&$0, sent: { sent[$0] }) }) { rows[id] = row }
        }
        return rows
    }

    /// What the ledger holds of the revocations the results' answers show (rare: most answers
    /// show none, and then nothing is read), on the rows they are for.
    private func readLedgerRevocations(of results: [ResultBatch.Result], into rows: inout [Int64: RowUpdatePlan.LockedRow]) async throws {
        // Each row's revoked transactions, by id, with their chain: an id the ledger holds of
        // another chain is not this row's.
        var wanted: [Int64: [String: String]] = [:]
        for case .verified(let update) in results {
            for transaction in update.transactions where transaction.revocationDateMs != nil {
                if let id = transaction.transactionID, let chain = transaction.originalTransactionID { wanted[update.subscriptionID, default: [:]][id] = chain }
            }
        }
        let ids = Set(wanted.values.flatMap(\.keys))
        guard !ids.isEmpty else { return }
        let statements = dialect == .sqlite ? ids.sorted().map(LedgerSQL.revocation) : [LedgerSQL.revocations(of: ids.sorted())]
        var held: [String: (chain: String, revokedAtMs: Int64)] = [:]
        for statement in statements {
            for (id, chain, revokedAt) in try await session.rows(statement, { row -> (String, String, Int64) in
                (try row.column(), try row.column(), try row.column())
            }) { held[id] = (chain, revokedAt) }
        }
        for (rowID, transactions) in wanted {
            rows[rowID]?.ledgerRevokedAtMs = transactions.reduce(into: [:]) { counted, transaction in
                if let entry = held[transaction.key], entry.chain == transaction.value { counted[transaction.key] = entry.revokedAtMs }
            }
        }
    }

    /// The receipt a poll sent for `result`'s answer; nil for a notification's, or no answer.
    private static func receiptSent(_ result: ResultBatch.Result) -> String? {
        guard case .verified(let update) = result else { return nil }
        return update.receiptSent
    }

    /// Which rows own the chains the batch's new chains may adopt, as the transaction sees them.
    private func owners(of results: [ResultBatch.Result], current: [Int64: RowUpdatePlan.LockedRow]) async throws -> [String: Int64] {
        let chains = results.flatMap { result -> [String] in
            guard case .verified(let update) = result, let chain = update.state.originalTransactionID,
                chain != current[update.subscriptionID]?.state.originalTransactionID
            else { return [] }
            return ([update.state] + update.otherChains).compactMap(\.originalTransactionID)
        }
        guard !chains.isEmpty else { return [:] }
        let statements = dialect == .sqlite ? Set(chains).map(PlanWriteSQL.owner) : [PlanWriteSQL.owners(of: chains)]
        var owners: [String: Int64] = [:]
        for statement in statements {
            for (chain, id) in try await session.rows(statement, { row -> (String, Int64) in (try row.column(), try row.column()) }) where owners[chain] == nil {
                owners[chain] = id
            }
        }
        return owners
    }

    /// A plan's columns and audit rows: written now on SQLite, gathered on PostgreSQL.
    private mutating func write(_ plan: RowUpdatePlan) async throws {
        let id = plan.subscriptionID
        switch (plan.columns, dialect) {
        case (.untouched, _):
            break
        case (.failure(let failure), .sqlite):
            try await session.execute(PlanWriteSQL.failure(id, failure, atMs: plan.atMs))
        case (.failure(let failure), .postgres):
            failureRows.append(PlanWriteSQL.failureJSON(id, failure, atMs: plan.atMs))
        case (.verified(let state, let latestReceipt, let status, let appleStateAtMs), .sqlite):
            try await session.execute(PlanWriteSQL.verified(
                id, plan: plan, state: state, latestReceipt: latestReceipt, status: status, appleStateAtMs: appleStateAtMs))
        case (.verified(let state, let latestReceipt, let status, let appleStateAtMs), .postgres):
            verifiedRows.append(PlanWriteSQL.verifiedJSON(
                id, plan: plan, state: state, latestReceipt: latestReceipt, status: status, appleStateAtMs: appleStateAtMs))
        }
        for entry in plan.ledger where entry.subscriptionID != nil { try await write(entry) }
        guard let userID = plan.userID else { return }
        for event in plan.events { try await record(.init(subscriptionID: id, userID: userID, plan: plan, event: event)) }
    }

    /// A ledger entry: written now on SQLite, gathered on PostgreSQL.
    private mutating func write(_ entry: LedgerEntry) async throws {
        guard dialect == .postgres else { return try await session.execute(LedgerSQL.upsert(entry)) }
        guard let id = entry.key?.transactionID else { return }
        if let held = ledgerRows[entry.precedence]?[id], held.asOfMs > entry.asOfMs { return }
        ledgerRows[entry.precedence, default: [:]][id] = (entry.asOfMs, LedgerSQL.json(entry))
    }

    /// An audit row and its outbound event (a contract change's): written now on SQLite, gathered on PostgreSQL.
    private mutating func record(_ row: PlanWriteSQL.AuditRow) async throws {
        guard dialect == .sqlite else { return audit.append(row) }
        let auditID: Int64 = try await session.rows(PlanWriteSQL.audit(row)) { try $0.column() }[0]
        if outbox, let outbound = OutboundEvent(row.event, plan: row.plan, subscriptionID: row.subscriptionID, userID: row.userID, auditEventID: auditID) {
            try await session.execute(PlanWriteSQL.outbound(outbound))
        }
    }

    /// What PostgreSQL gathered, one statement per kind: rows, failures, then the audit rows with
    /// ids taken from the trail's sequence first, in order, so that each change's outbound event
    /// names its audit row.
    private mutating func flush() async throws {
        if !verifiedRows.isEmpty { try await session.execute(PlanWriteSQL.verifiedSet(verifiedRows, releasing: releasing)) }
        if !failureRows.isEmpty { try await session.execute(PlanWriteSQL.failureSet(failureRows, releasing: releasing)) }
        if !audit.isEmpty {
            let ids = try await session.rows(PlanWriteSQL.auditIDs(audit.count)) { row -> Int64 in try row.column() }.sorted()
            var rows: [String] = []
            for (auditID, row) in zip(ids, audit) {
                rows.append(PlanWriteSQL.auditJSON(row, id: auditID))
                if outbox, let outbound = OutboundEvent(row.event, plan: row.plan, subscriptionID: row.subscriptionID, userID: row.userID, auditEventID: auditID) {
                    outboxRows.append(OutboxSQL.recordJSON(outbound))
                }
            }
            try await session.execute(PlanWriteSQL.auditSet(rows))
        }
        for precedence in LedgerEntry.Precedence.allCases {
            guard let rows = ledgerRows[precedence], !rows.isEmpty else { continue }
            // In id order, as every writer takes the ledger's rows.
            try await session.execute(LedgerSQL.upsertSet(rows.sorted { $0.key < $1.key }.map(\.value.json), precedence: precedence))
        }
        verifiedRows = []
        failureRows = []
        audit = []
        ledgerRows = [:]
    }
}
