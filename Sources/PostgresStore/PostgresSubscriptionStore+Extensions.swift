import PostgresNIO
import StatusPolling

/// The mass renewal-date extensions (``RenewalExtensionLedger``) in `renewal_extensions`.
extension PostgresSubscriptionStore {
    public func recordMassExtension(_ request: MassExtensionRequest) async throws -> MassExtensionRequest {
        try await transaction { connection, logger in
            try await connection.execute(RenewalExtensionsSQL.record(request), logger: logger)
            return try await connection.rows(RenewalExtensionsSQL.list(request.requestIdentifier), logger: logger) { try RenewalExtensionsSQL.read(&$0) }.first ?? request
        }
    }

    public func markMassExtension(_ requestIdentifier: String, acceptedAtMs: Int64?, appleError: Int?) async throws {
        try await transaction { connection, logger in
            try await connection.execute(RenewalExtensionsSQL.mark(requestIdentifier, acceptedAtMs: acceptedAtMs, appleError: appleError), logger: logger)
        }
    }

    public func recordMassExtensionStatus(_ status: MassExtensionStatus, checkedAtMs: Int64) async throws {
        try await transaction { connection, logger in try await connection.execute(RenewalExtensionsSQL.status(status, checkedAtMs: checkedAtMs), logger: logger) }
    }

    public func massExtensions() async throws -> [MassExtensionRequest] {
        try await read { connection, logger in try await connection.rows(RenewalExtensionsSQL.list(), logger: logger) { try RenewalExtensionsSQL.read(&$0) } }
    }
}
