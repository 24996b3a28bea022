import ArgumentParser
import Foundation
import StatusPolling

/// Where the App Store shared secret comes from: a file or the environment, never argv, so it
/// does not show in `ps` or shell history.
enum SecretSource {
    static let environmentVariable = "APPSTORE_SHARED_SECRET"

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
        guard !secret.isEmpty else {
            throw usageError("no App Store shared secret. Set \(environmentVariable) or pass --shared-secret-file PATH (App Store Connect → your app → App-Specific Shared Secret).")
        }
        return SharedSecret(secret)
    }
}
