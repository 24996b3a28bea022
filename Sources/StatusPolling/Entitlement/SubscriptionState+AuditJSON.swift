extension SubscriptionState {
    /// The contract columns as the audit trail stores them: a JSON object with every column, nulls
    /// included, keys sorted. Written by hand because the writer makes one per changed row; the
    /// `Codable` conformance reads it back.
    public var auditJSON: String {
        "{" + ContractColumn.sortedByName.map { "\"\($0.rawValue)\":" + $0.value(in: self).json(flagsAsNumbers: false) }.joined(separator: ",") + "}"
    }

    /// The contract columns as one JSON object's members (no braces), flags as 0/1 as the stores
    /// hold them: PostgreSQL's set-based writes read them with `jsonb_to_recordset`.
    public var columnsJSON: String {
        ContractColumn.allCases.map { "\"\($0.rawValue)\":" + $0.value(in: self).json(flagsAsNumbers: true) }.joined(separator: ",")
    }
}
