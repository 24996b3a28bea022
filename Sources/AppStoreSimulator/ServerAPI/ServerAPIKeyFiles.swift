import Foundation

/// The files a Server API client needs to talk to a running simulator, as Apple hands them out:
/// the trusted root (PEM and DER) and the In-App Purchase key `SubscriptionKey_<KEYID>.p8`.
public struct ServerAPIKeyFiles: Sendable {
    public var rootPEMPath: String
    public var rootDERPath: String
    /// The private key (PKCS#8 PEM), mode 0600.
    public var privateKeyPath: String

    /// Writes the three files of `simulator` into `directory` (created if missing), replacing
    /// files of the same names; the key file is created with mode 0600, never wider.
    public static func write(_ simulator: AppStoreSimulator, into directory: String) throws -> ServerAPIKeyFiles {
        try write(pki: simulator.pki, key: simulator.serverAPIKey, into: directory)
    }

    /// Writes the root of `pki` and the private half of `key` into `directory`.
    public static func write(pki: SimulatorPKI, key: SimulatedInAppPurchaseKey, into directory: String) throws -> ServerAPIKeyFiles {
        let fileManager = FileManager.default
        try fileManager.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let base = URL(fileURLWithPath: directory)
        let files = ServerAPIKeyFiles(
            rootPEMPath: base.appendingPathComponent("simulator-root.pem").path,
            rootDERPath: base.appendingPathComponent("simulator-root.der").path,
            privateKeyPath: base.appendingPathComponent("SubscriptionKey_\(key.keyID).p8").path)
        try Data(pki.rootCertificatePEM.utf8).write(to: URL(fileURLWithPath: files.rootPEMPath))
        try Data(pki.rootCertificateDER).write(to: URL(fileURLWithPath: files.rootDERPath))
        // Removed first so that the new file is created 0600 rather than keeping an old, wider mode.
        if fileManager.fileExists(atPath: files.privateKeyPath) { try fileManager.removeItem(atPath: files.privateKeyPath) }
        guard fileManager.createFile(atPath: files.privateKeyPath, contents: Data(key.privateKeyPEM.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: files.privateKeyPath])
        }
        return files
    }
}
