import AppStoreBackends

/// The mass renewal-date extensions in `renewal_extensions`, on any ``SQLStore``.
extension RenewalExtensionLedger where Self: SQLStore {
    public func recordMassExtension(_ request: MassExtensionRequest) async throws -> MassExtensionRequest {
        try await commit([RenewalExtensionsSQL.record(request), RenewalExtensionsSQL.list(request.requestIdentifier)]) {
            try RenewalExtensionsSQL.read(&$0)
        }.first ?? request
    }

    public func markMassExtension(_ requestIdentifier: String, acceptedAtMs: Int64?, appleError: Int?) async throws {
        try await commit(RenewalExtensionsSQL.mark(requestIdentifier, acceptedAtMs: acceptedAtMs, appleError: appleError))
    }

    public func recordMassExtensionStatus(_ status: MassExtensionStatus, checkedAtMs: Int64) async throws {
        try await commit(RenewalExtensionsSQL.status(status, checkedAtMs: checkedAtMs))
    }

    public func massExtensions() async throws -> [MassExtensionRequest] {
        try await rows(RenewalExtensionsSQL.list()) { try RenewalExtensionsSQL.read(&$0) }
    }
}
