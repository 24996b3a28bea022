import AppStoreBackends

/// The database's record of mass renewal-date extensions (`renewal_extensions`), by request
/// identifier: recorded before Apple is asked, so a command killed mid-way is resumed with the
/// same identifier, and followed until Apple says it is complete.
public protocol RenewalExtensionLedger: Sendable {
    /// Records `request` unless its identifier is known; returns the request as stored (the
    /// earlier one when it was).
    func recordMassExtension(_ request: MassExtensionRequest) async throws -> MassExtensionRequest
    /// Apple took the request at `acceptedAtMs`, or refused it with `appleError`.
    func markMassExtension(_ requestIdentifier: String, acceptedAtMs: Int64?, appleError: Int?) async throws
    /// Apple's status of the request, asked at `checkedAtMs`.
    func recordMassExtensionStatus(_ status: MassExtensionStatus, checkedAtMs: Int64) async throws
    /// Every recorded request, oldest first.
    func massExtensions() async throws -> [MassExtensionRequest]
}
