extension SubscriptionState {
    /// The contract columns as the audit trail stores them: a JSON object with every column, nulls
    /// included, keys sorted. Written by hand into one string because the writer makes two per
    /// changed row (a `map` and `joined` over the columns cost ~150 allocations a row); the
    /// `Codable` conformance reads it back.
    public var auditJSON: String {
        var out = "{"
        out.reserveCapacity(640)
        appendMembers(Self.sortedKeys, to: &out, flagsAsNumbers: false)
        out.append("}")
        return out
    }

    /// The contract columns as one JSON object's members (no braces), flags as 0/1 as the stores
    /// hold them: PostgreSQL's set-based writes read them with `jsonb_to_recordset`.
    public var columnsJSON: String {
        var out = ""
        out.reserveCapacity(640)
        appendMembers(Self.tableKeys, to: &out, flagsAsNumbers: true)
        return out
    }

    /// Each column with its `"name":` written once.
    private static let sortedKeys = ContractColumn.sortedByName.map { ($0, "\"\($0.rawValue)\":") }
    private static let tableKeys = ContractColumn.allCases.map { ($0, "\"\($0.rawValue)\":") }

    private func appendMembers(_ keys: [(ContractColumn, String)], to out: inout String, flagsAsNumbers: Bool) {
        for (index, (column, key)) in keys.enumerated() {
            if index > 0 { out.append(",") }
            out.append(key)
            column.value(in: self).appendJSON(to: &out, flagsAsNumbers: flagsAsNumbers)
        }
    }
}
