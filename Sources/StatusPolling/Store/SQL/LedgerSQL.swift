import EntitlementCore

/// The ledger's write (`subscription_transactions`): one upsert per entry on SQLite (a fixed text
/// per ``LedgerEntry/Precedence``, kept compiled), one per precedence and batch on PostgreSQL
/// (`jsonb_to_recordset`, as ``PlanWriteSQL`` writes rows). Both dialects accept the same
/// `ON CONFLICT … DO UPDATE … WHERE`: each column merges by its ``LedgerColumn/Rule``, and the
/// `WHERE` leaves the row untouched when the entry changes nothing — a re-delivered notification,
/// a poll re-asking an unchanged subscription.
enum LedgerSQL {
    /// One entry, for SQLite.
    static func upsert(_ entry: LedgerEntry) -> SQLStatement {
        SQLStatement(sqlite: sqliteTexts[entry.precedence]!, LedgerColumn.allCases.map { $0.value(in: entry) })
    }

    /// The text per precedence, made once (the connection keeps each compiled).
    private static let sqliteTexts = Dictionary(uniqueKeysWithValues: LedgerEntry.Precedence.allCases.map { ($0, sqlite($0)) })

    private static func sqlite(_ precedence: LedgerEntry.Precedence) -> String {
        let placeholders = Array(repeating: "?", count: LedgerColumn.allCases.count).joined(separator: ", ")
        return "INSERT INTO subscription_transactions AS t (\(LedgerColumn.list)) VALUES (\(placeholders))\n" + onConflict(precedence)
    }

    /// When the ledger holds these transactions revoked, read as (id, chain, revoked_at); for
    /// PostgreSQL, in one statement.
    static func revocations(of ids: [String]) -> SQLStatement {
        """
        SELECT transaction_id, original_transaction_id, revoked_at FROM subscription_transactions
        WHERE transaction_id IN (\(list: ids)) AND revoked_at IS NOT NULL
        """
    }

    /// One transaction's, for SQLite: a text made once, kept compiled.
    static func revocation(of id: String) -> SQLStatement {
        SQLStatement(sqlite: revocationSQLite, [.text(id)])
    }

    private static let revocationSQLite = """
        SELECT transaction_id, original_transaction_id, revoked_at FROM subscription_transactions WHERE transaction_id = ? AND revoked_at IS NOT NULL
        """

    /// What the ledger holds of these transactions, read by ``record(_:)``.
    static func records(of ids: [String]) -> SQLStatement {
        "SELECT \(unescaped: recordList) FROM subscription_transactions WHERE transaction_id IN (\(list: ids)) ORDER BY transaction_id"
    }

    /// The ledger's rows after `cursor` in id order, `limit` at most: for checks that walk it whole.
    static func records(after cursor: String, limit: Int) -> SQLStatement {
        "SELECT \(unescaped: recordList) FROM subscription_transactions WHERE transaction_id > \(cursor) ORDER BY transaction_id LIMIT \(limit)"
    }

    private static let recordList = """
        transaction_id, original_transaction_id, subscription_id, product_id, purchased_at, expires_at, revoked_at, revocation_reason, \
        revocation_type, price, currency, storefront, offer_type, offer_identifier, offer_discount_type, is_upgraded, \
        coalesce(billing_recovery, 0), as_of, first_source, first_seen_at, updated_at
        """

    /// A row of ``records(of:)``.
    static func record(_ row: inout some ColumnReader) throws -> LedgerRecord {
        LedgerRecord(
            transactionID: try row.column(), originalTransactionID: try row.column(), subscriptionID: try row.column(), productID: try row.column(),
            purchasedAtMs: try row.column(), expiresAtMs: try row.column(), revokedAtMs: try row.column(), revocationReason: try row.column(),
            revocationType: try row.column(), price: try row.column(), currency: try row.column(), storefront: try row.column(),
            offerType: try row.column(), offerIdentifier: try row.column(), offerDiscountType: try row.column(), isUpgraded: try row.column(),
            isBillingRecovery: try row.column(), asOfMs: try row.column(), firstSource: try row.column(), firstSeenAtMs: try row.column(), updatedAtMs: try row.column())
    }

    /// Entries of one precedence (``json(_:)``, one per transaction id), for PostgreSQL.
    static func upsertSet(_ rows: [String], precedence: LedgerEntry.Precedence) -> SQLStatement {
        """
        INSERT INTO subscription_transactions AS t (\(unescaped: LedgerColumn.list))
        SELECT \(unescaped: recordColumns) FROM jsonb_to_recordset(\("[" + rows.joined(separator: ",") + "]")::jsonb) AS v(\(unescaped: recordTypes))
        \(unescaped: conflictClauses[precedence]!)
        """
    }

    private static let conflictClauses = Dictionary(uniqueKeysWithValues: LedgerEntry.Precedence.allCases.map { ($0, onConflict($0)) })

    /// An entry as ``upsertSet(_:precedence:)`` reads it.
    static func json(_ entry: LedgerEntry) -> String {
        var out = "{"
        for (index, column) in LedgerColumn.allCases.enumerated() {
            if index > 0 { out += "," }
            out += "\"" + column.rawValue + "\":"
            switch column.value(in: entry) {
            case .null: out += "null"
            case .integer(let number): out += number.description
            case .text(let text): out += JSONText.quoted(text)
            }
        }
        return out + "}"
    }

    private static let recordColumns = LedgerColumn.allCases.map { "v.\($0.rawValue)" }.joined(separator: ", ")
    private static let recordTypes = LedgerColumn.allCases.map { "\($0.rawValue) \($0.kind.postgresType)" }.joined(separator: ", ")

    /// How an entry merges with the ledger's row of the same id, by its precedence: when it
    /// takes the changeable values, each column's assignment, and the condition for writing at all.
    static func onConflict(_ precedence: LedgerEntry.Precedence) -> String {
        let takes: String? = switch precedence {
        case .newerWins: "excluded.as_of > t.as_of"
        case .heldByRow: "excluded.as_of >= t.as_of"
        case .factsOnly: nil
        }
        var assignments: [String] = [], fills: [String] = [], changes: [String] = []
        for column in LedgerColumn.allCases {
            let c = column.rawValue
            switch column.rule {
            case .firstWritten:
                continue
            case .fact:
                assignments.append("\(c) = coalesce(t.\(c), excluded.\(c))")
                fills.append("(t.\(c) IS NULL AND excluded.\(c) IS NOT NULL)")
            case .changeable, .signing, .asOf:
                guard let takes else { continue }
                assignments.append("\(c) = CASE WHEN \(takes) THEN excluded.\(c) ELSE t.\(c) END")
                if column.rule == .changeable { changes.append("excluded.\(c) IS DISTINCT FROM t.\(c)") }
            case .revocationDetail:
                guard let takes else { continue }
                let merged = "CASE WHEN excluded.revoked_at IS NULL THEN NULL ELSE coalesce(excluded.\(c), t.\(c)) END"
                assignments.append("\(c) = CASE WHEN \(takes) THEN \(merged) ELSE t.\(c) END")
                changes.append("\(merged) IS DISTINCT FROM t.\(c)")
            case .owner:
                assignments.append("\(c) = coalesce(excluded.\(c), t.\(c))")
                fills.append("(excluded.\(c) IS NOT NULL AND excluded.\(c) IS DISTINCT FROM t.\(c))")
            case .touched:
                assignments.append("\(c) = excluded.\(c)")
            }
        }
        var conditions = fills
        switch precedence {
        case .newerWins: conditions.insert(takes!, at: 0)
        case .heldByRow: conditions.insert("(\(takes!) AND (\(changes.joined(separator: " OR "))))", at: 0)
        case .factsOnly: break
        }
        // An id that comes back with another chain is not Apple's data for this row: kept as first written.
        return """
            ON CONFLICT (transaction_id) DO UPDATE SET \(assignments.joined(separator: ", "))
            WHERE t.original_transaction_id = excluded.original_transaction_id AND (\(conditions.joined(separator: "\n   OR ")))
            """
    }
}
