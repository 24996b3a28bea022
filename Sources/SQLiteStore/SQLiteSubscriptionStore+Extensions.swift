import GRDB
import StatusPolling

/// The mass renewal-date extensions (``RenewalExtensionLedger``) in `renewal_extensions`.
extension SQLiteSubscriptionStore {
    public func recordMassExtension(_ request: MassExtensionRequest) async throws -> MassExtensionRequest {
        try await writing { db in
            try db.execute(shared: RenewalExtensionsSQL.record(request))
            return try db.fetchOne(shared: RenewalExtensionsSQL.list(request.requestIdentifier)) { try RenewalExtensionsSQL.read(&$0) } ?? request
        }
    }

    public func markMassExtension(_ requestIdentifier: String, acceptedAtMs: Int64?, appleError: Int?) async throws {
        try await writing { db in try db.execute(shared: RenewalExtensionsSQL.mark(requestIdentifier, acceptedAtMs: acceptedAtMs, appleError: appleError)) }
    }

    public func recordMassExtensionStatus(_ status: MassExtensionStatus, checkedAtMs: Int64) async throws {
        try await writing { db in try db.execute(shared: RenewalExtensionsSQL.status(status, checkedAtMs: checkedAtMs)) }
    }

    public func massExtensions() async throws -> [MassExtensionRequest] {
        try await reading { db in try db.fetchAll(shared: RenewalExtensionsSQL.list()) { try RenewalExtensionsSQL.read(&$0) } }
    }
}
