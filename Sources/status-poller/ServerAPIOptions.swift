import AppStoreBackends
import ArgumentParser
import PollerCommandLine
import StatusPolling

/// Which backend, and how to reach the App Store Server API: shared by `run` and `backfill`.
struct ServerAPIOptions: ParsableArguments {
    @Option(help: "verify-receipt, server-api or auto: the Server API where its credentials are configured, verifyReceipt otherwise (default: verify-receipt).")
    var backend: BackendChoice?

    @Option(help: ArgumentHelp("App Store Server API production base URL (default: \(ServerAPIConfiguration.appleProductionURL))."))
    var serverApiUrl: String?

    @Option(help: ArgumentHelp("App Store Server API sandbox base URL, asked on 4040010 (default: \(ServerAPIConfiguration.appleSandboxURL))."))
    var serverApiSandboxUrl: String?

    @Option(help: "Issuer id of the In-App Purchase key (App Store Connect → Users and Access → Integrations → In-App Purchase).")
    var issuerId: String?

    @Option(help: "Key id of the In-App Purchase key.")
    var keyId: String?

    @Option(help: "The In-App Purchase key's .p8 file (else APPSTORE_PRIVATE_KEY holds the PEM text).")
    var privateKeyFile: String?

    @Option(help: "Apple's numeric id of the app; answers naming another app id are refused.")
    var appAppleId: Int64?

    @Option(help: "A root certificate (PEM or DER) to trust besides Apple Root CA - G3; repeatable; only with loopback Server API URLs (a simulator).")
    var trustedRootFile: [String] = []

    @Option(help: ArgumentHelp(
        "Most Server API requests in any one second (default: \(ServerAPIConfiguration.defaultRate); Apple allows 50, the sandbox a tenth of it). "
            + "PostgreSQL: for all the workers of the database together; give each the same rate."))
    var serverApiRate: Int?

    func resolve(_ settings: Settings, allowInsecureHTTP: Bool) throws -> ServerAPISettings {
        let backendText = settings.string(backend?.rawValue, "backend") ?? BackendChoice.verifyReceipt.rawValue
        guard let choice = BackendChoice(rawValue: backendText) else {
            throw usageError("backend must be verify-receipt, server-api or auto, got '\(backendText)'.")
        }
        let roots = settings.list(trustedRootFile, "trusted_root_file")
        let resolved = ServerAPISettings(
            backend: choice,
            productionURL: settings.string(serverApiUrl, "server_api_url") ?? ServerAPIConfiguration.appleProductionURL,
            sandboxURL: settings.string(serverApiSandboxUrl, "server_api_sandbox_url") ?? ServerAPIConfiguration.appleSandboxURL,
            issuerID: settings.string(issuerId, "issuer_id"), keyID: settings.string(keyId, "key_id"),
            privateKeyFile: settings.string(privateKeyFile, "private_key_file"),
            appAppleID: try settings.appAppleID(appAppleId),
            trustedRootFiles: roots,
            rate: try settings.int(serverApiRate, "server_api_rate", default: ServerAPIConfiguration.defaultRate),
            rateGiven: try serverApiRate != nil || settings.int(nil, "server_api_rate", default: -1) != -1,
            allowInsecureHTTP: allowInsecureHTTP)
        try resolved.validate()
        return resolved
    }
}
