import AppStoreBackends
import Foundation
import PollerCommandLine
import StatusPolling

/// `ServerAPIOptions` after the config file and the environment.
struct ServerAPISettings {
    static let privateKeyVariable = "APPSTORE_PRIVATE_KEY"
    /// The systemd credential holding the key (`LoadCredential=private-key:/etc/status-poller/private-key.p8`).
    static let privateKeyCredential = "private-key"

    var backend: BackendChoice
    var productionURL: String
    var sandboxURL: String
    var issuerID: String?
    var keyID: String?
    var privateKeyFile: String?
    var appAppleID: Int64?
    var trustedRootFiles: [String]
    var rate: Int
    /// `--server-api-rate` (or `server_api_rate`) was given: then the catch-up keeps it too.
    var rateGiven = false
    var allowInsecureHTTP: Bool

    func validate() throws {
        guard (1...1000).contains(rate) else { throw usageError("--server-api-rate must be between 1 and 1000 requests per second, got \(rate).") }
        guard backend != .verifyReceipt else { return }
        for (flag, url) in [("--server-api-url", productionURL), ("--server-api-sandbox-url", sandboxURL)] {
            let host = try AppStoreSettings.checkedHost(flag, url, allowInsecureHTTP: allowInsecureHTTP, carrying: "the bearer token")
            if !trustedRootFiles.isEmpty, !AppStoreSettings.isLoopback(host) {
                throw usageError("""
                    --trusted-root-file is only accepted when every Server API URL is on loopback (a simulator), and \(flag) is \(url). \
                    Against Apple, signed data is trusted only under Apple Root CA - G3.
                    """)
            }
        }
        let given = [issuerID, keyID].compactMap { $0 }.count
        if backend == .serverAPI || given > 0 {
            guard issuerID?.isEmpty == false, keyID?.isEmpty == false else {
                throw usageError("the App Store Server API needs --issuer-id and --key-id (or issuer_id and key_id in the config file, or STATUS_POLLER_ISSUER_ID and STATUS_POLLER_KEY_ID): App Store Connect → Users and Access → Integrations → In-App Purchase.")
            }
        }
    }

    /// The Server API is configured: ids given (the key is read when the job starts).
    var hasCredentials: Bool { issuerID != nil && keyID != nil }

    /// The credentials with the key read from `--private-key-file`, APPSTORE_PRIVATE_KEY or the
    /// `private-key` systemd credential (in that order), or nil when this run does not use the Server API.
    func credentials(bundleID: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ServerAPICredentials? {
        guard backend != .verifyReceipt, hasCredentials, let issuerID, let keyID else { return nil }
        let pem: String
        if let privateKeyFile {
            guard let data = FileManager.default.contents(atPath: privateKeyFile) else {
                throw usageError("cannot read the In-App Purchase key file \(privateKeyFile). Check the path and its permissions.")
            }
            pem = String(decoding: data, as: UTF8.self)
        } else if let text = environment[Self.privateKeyVariable], !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            pem = text
        } else if let text = SecretSource.credential(Self.privateKeyCredential, environment: environment) {
            pem = text
        } else {
            throw usageError("""
                no In-App Purchase key. Set \(Self.privateKeyVariable) to the .p8 file's text or pass --private-key-file PATH (App Store Connect → \
                Users and Access → Integrations → In-App Purchase); under systemd, put it in the file of LoadCredential=\(Self.privateKeyCredential):FILE.
                """)
        }
        do {
            return ServerAPICredentials(issuerID: issuerID, keyID: keyID, key: try InAppPurchaseKey(pem: pem), bundleID: bundleID)
        } catch {
            throw usageError("\(error).")
        }
    }

    /// The Server API's configuration for the notification commands, whatever `--backend` says:
    /// `purpose` names what needs it in the error when no credentials are given.
    func notificationsConfiguration(appStore: AppStoreSettings, purpose: String) throws -> ServerAPIConfiguration {
        var settings = self
        settings.backend = .serverAPI
        try settings.validate()
        guard let credentials = try settings.credentials(bundleID: appStore.bundleID) else {
            throw usageError("\(purpose) with the App Store Server API: give --issuer-id, --key-id and the In-App Purchase key.")
        }
        var configuration = try settings.configuration(credentials, appStore: appStore, readHistory: false)
        // Get Notification History has a limit of its own (Apple: 50 per second, per app).
        if !rateGiven { configuration.ratePerSecond = ServerAPIConfiguration.notificationHistoryRate }
        return configuration
    }

    /// The client's configuration: Apple's root, plus any test roots.
    func configuration(_ credentials: ServerAPICredentials, appStore: AppStoreSettings, readHistory: Bool) throws -> ServerAPIConfiguration {
        var configuration = ServerAPIConfiguration(
            productionURL: productionURL, sandboxURL: sandboxURL, credentials: credentials, appAppleID: appAppleID, ratePerSecond: rate,
            requestTimeout: .milliseconds(Int64(appStore.requestTimeout * 1000)), retry: RetryPolicy(maxAttempts: appStore.maxAttempts),
            readHistory: readHistory)
        for path in trustedRootFiles {
            do { configuration.trustedRoots.append(try TrustedRootFile.load(path)) } catch { throw usageError("\(error).") }
        }
        return configuration
    }

    /// The settings recorded in the run history (never the key).
    var recorded: [String: String] {
        var recorded = ["backend": backend.rawValue]
        guard backend != .verifyReceipt else { return recorded }
        recorded["server_api_url"] = productionURL
        recorded["server_api_sandbox_url"] = sandboxURL
        recorded["server_api_rate"] = String(rate)
        if let issuerID { recorded["issuer_id"] = issuerID }
        if let keyID { recorded["key_id"] = keyID }
        if let appAppleID { recorded["app_apple_id"] = String(appAppleID) }
        if !trustedRootFiles.isEmpty { recorded["trusted_root_files"] = trustedRootFiles.joined(separator: ",") }
        return recorded
    }
}
