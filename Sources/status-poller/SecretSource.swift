import AppStoreBackends
import ArgumentParser
import Foundation
import PollerCommandLine
import StatusPolling

/// Where the App Store shared secret comes from: a file, the environment, or systemd's
/// credentials, never argv, so it does not show in `ps` or shell history.
enum SecretSource {
    static let environmentVariable = "APPSTORE_SHARED_SECRET"
    /// Set by systemd for a unit with `LoadCredential=`: a private directory holding one file per credential.
    static let credentialsDirectoryVariable = "CREDENTIALS_DIRECTORY"
    /// The credential holding the shared secret (`LoadCredential=shared-secret:/etc/status-poller/shared-secret`).
    static let sharedSecretCredential = "shared-secret"

    /// Precedence: `--shared-secret-file` (or `shared_secret_file`), then APPSTORE_SHARED_SECRET,
    /// then the `shared-secret` credential when systemd gave one.
    static func read(file: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> SharedSecret {
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw usageError("cannot read the shared secret file \(file). Check the path and its permissions.")
            }
            let secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !secret.isEmpty else { throw usageError("the shared secret file \(file) is empty.") }
            return SharedSecret(secret)
        }
        let secret = (environment[environmentVariable] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if !secret.isEmpty { return SharedSecret(secret) }
        if let credential = credential(sharedSecretCredential, environment: environment) { return SharedSecret(credential) }
        throw usageError("""
            no App Store shared secret. Set \(environmentVariable) or pass --shared-secret-file PATH (App Store Connect → your app → \
            App-Specific Shared Secret); under systemd, put it in the file of LoadCredential=\(sharedSecretCredential):FILE.
            """)
    }

    /// A shared secret is configured: a file named, the variable set, or a non-empty credential.
    static func isGiven(file: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        file != nil || environment[environmentVariable] != nil || credential(sharedSecretCredential, environment: environment) != nil
    }

    /// The text of systemd credential `name`, trimmed; nil without `$CREDENTIALS_DIRECTORY`, when
    /// the credential is absent, or when it is empty (a placeholder file: not configured).
    static func credential(_ name: String, environment: [String: String]) -> String? {
        guard let directory = environment[credentialsDirectoryVariable], !directory.isEmpty,
            let data = FileManager.default.contents(atPath: URL(fileURLWithPath: directory).appendingPathComponent(name).path)
        else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}
