import AppStoreBackends

/// The statements of ``RenewalExtensionLedger``, the same on both stores.
public enum RenewalExtensionsSQL {
    public static func record(_ r: MassExtensionRequest) -> SQLStatement {
        """
        INSERT INTO renewal_extensions (request_identifier, product_id, extend_by_days, reason_code, storefront_country_codes, environment, requested_at)
        VALUES (\(r.requestIdentifier), \(r.productID), \(r.days), \(r.reasonCode), \(r.storefrontCountryCodes?.joined(separator: ",")), \(r.environment), \(r.requestedAtMs))
        ON CONFLICT (request_identifier) DO NOTHING
        """
    }

    public static func mark(_ requestIdentifier: String, acceptedAtMs: Int64?, appleError: Int?) -> SQLStatement {
        """
        UPDATE renewal_extensions SET accepted_at = coalesce(accepted_at, \(acceptedAtMs)), apple_error = \(appleError)
        WHERE request_identifier = \(requestIdentifier)
        """
    }

    public static func status(_ status: MassExtensionStatus, checkedAtMs: Int64) -> SQLStatement {
        """
        UPDATE renewal_extensions SET checked_at = \(checkedAtMs), completed_at = \(status.complete ? status.completeDateMs ?? checkedAtMs : nil),
            succeeded_count = \(status.succeeded), failed_count = \(status.failed)
        WHERE request_identifier = \(status.requestIdentifier)
        """
    }

    /// Every request (or the one named), oldest first, read by ``read(_:)``.
    public static func list(_ requestIdentifier: String? = nil) -> SQLStatement {
        """
        SELECT request_identifier, product_id, extend_by_days, reason_code, storefront_country_codes, environment, requested_at, accepted_at,
            apple_error, checked_at, completed_at, succeeded_count, failed_count
        FROM renewal_extensions \(SQLStatement(where: requestIdentifier.map { ["request_identifier = \($0)"] } ?? []))
        ORDER BY requested_at, request_identifier
        """
    }

    public static func read<Reader: ColumnReader>(_ row: inout Reader) throws -> MassExtensionRequest {
        let id: String = try row.column(), product: String = try row.column(), days: Int = try row.column(), reason: Int = try row.column()
        let storefronts: String? = try row.column(), environment: String = try row.column(), requested: Int64 = try row.column()
        let accepted: Int64? = try row.column(), error: Int? = try row.column(), checked: Int64? = try row.column(), completed: Int64? = try row.column()
        let succeeded: Int64? = try row.column(), failed: Int64? = try row.column()
        return MassExtensionRequest(
            requestIdentifier: id, productID: product, days: days, reasonCode: reason,
            storefrontCountryCodes: storefronts.map { $0.split(separator: ",").map(String.init) }, environment: environment, requestedAtMs: requested,
            acceptedAtMs: accepted, appleError: error, checkedAtMs: checked, completedAtMs: completed, succeeded: succeeded, failed: failed)
    }
}
