extension SubscriptionState {
    /// The contract columns as the audit trail stores them: a JSON object, keys sorted, without the
    /// columns that are null — `json_extract` and `->>` read an absent key as NULL, so readers see
    /// the same, and a snapshot is half the size (the trail is most of what a run writes). A cleared
    /// column is a key in `old_values` that `new_values` lacks. Written by hand into one string
    /// because the writer makes two per changed row (a `map` and `joined` over the columns cost
    /// ~150 allocations a row); the `Codable` conformance reads it back.
    public var auditJSON: String {
        var out = "{"
        out.reserveCapacity(320)
        var first = true
        for (column, key) in Self.sortedKeys {
            let value = column.value(in: self)
            guard !value.isNull else { continue }
            if !first { out.append(",") }
            first = false
            out.append(key)
            value.appendJSON(to: &out, flagsAsNumbers: false)
        }
        out.append("}")
        return out
    }

    /// The contract columns as one JSON object's members (no braces), flags as 0/1 as the stores
    /// hold them: PostgreSQL's set-based writes read them with `jsonb_to_recordset`.
    public var columnsJSON: String {
        var out = ""
        out.reserveCapacity(640)
        for (index, (column, key)) in Self.tableKeys.enumerated() {
            if index > 0 { out.append(",") }
            out.append(key)
            column.value(in: self).appendJSON(to: &out, flagsAsNumbers: true)
        }
        return out
    }

    /// Each column with its `"name":` written once.
    private static let sortedKeys = ContractColumn.sortedByName.map { ($0, "\"\($0.rawValue)\":") }
    private static let tableKeys = ContractColumn.allCases.map { ($0, "\"\($0.rawValue)\":") }
}
