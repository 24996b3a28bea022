import AppStoreBackends
import ArgumentParser
import Foundation
import NIOSSL
import PollerCommandLine
import ReceiverServer
import ServiceLifecycle
import StatusPolling
import X509

/// `status-poller notifications serve`: the receiver Apple posts to.
struct NotificationsServe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Receive Apple's notifications at POST /app-store/notifications until SIGTERM; GET /healthz and /metrics beside it.",
        discussion: """
            Version 2 (a signed payload) is verified to Apple Root CA - G3 with its nested transaction and \
            renewal info; version 1 is accepted only when its password is the shared secret \
            (APPSTORE_SHARED_SECRET or --shared-secret-file; without one, V1 is refused). Each notification \
            is recorded in app_store_notifications and applied to the row owning its chain in one \
            transaction before Apple hears 200; a store that cannot take the write answers 503 so Apple \
            sends it again. Register https://YOUR-HOST/app-store/notifications in App Store Connect \
            (App Information → App Store Server Notifications), behind a TLS proxy or with --tls-certificate-file. \
            With event_endpoints in the config file, the event deliverer (`events deliver`) runs alongside; with \
            the App Store Server API's credentials (issuer_id, key_id, private_key_file or APPSTORE_PRIVATE_KEY), \
            Apple's refund requests are answered alongside (`consumption send`, docs/CONSUMPTION.md).
            """)

    @OptionGroup var storeOptions: StoreOptions

    @Option(help: "HOST:PORT to listen on (default: 127.0.0.1:8080).")
    var listen: String?

    @Option(help: "The app's bundle identifier; notifications for any other app are refused.")
    var bundleId: String?

    @Option(help: "Apple's numeric id of the app; production notifications naming another are refused.")
    var appAppleId: Int64?

    @Option(help: "File holding the App Store shared secret, which authenticates V1 notifications (else APPSTORE_SHARED_SECRET; neither: V1 refused).")
    var sharedSecretFile: String?

    @Option(help: "A root certificate (PEM or DER) to trust besides Apple Root CA - G3; repeatable; only while listening on loopback (a simulator).")
    var trustedRootFile: [String] = []

    @Option(help: "PEM certificate chain for built-in TLS (1.2 or later); with --tls-key-file.")
    var tlsCertificateFile: String?

    @Option(help: "PEM private key for built-in TLS; with --tls-certificate-file.")
    var tlsKeyFile: String?

    @Option(help: ArgumentHelp("Largest body accepted, in bytes (default: \(ReceiverServer.Settings.defaultMaxBodyBytes); V1 receipts can exceed 100 KB)."))
    var maxBodyBytes: Int?

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let settings = try await storeOptions.settings()
        let database = try storeOptions.databasePath(settings)
        let output = try self.output.resolve(settings)
        let (host, port) = try Self.listenAddress(settings.string(listen, "listen") ?? "127.0.0.1:8080")
        let bundleID = try settings.required(bundleId, "bundle_id", flag: "--bundle-id")
        let appAppleID = try settings.appAppleID(appAppleId)
        let maxBody = try settings.int(maxBodyBytes, "max_body_bytes", default: ReceiverServer.Settings.defaultMaxBodyBytes)
        guard (1024...(64 << 20)).contains(maxBody) else { throw usageError("--max-body-bytes must be between 1024 and \(64 << 20), got \(maxBody).") }
        let roots = try trustedRoots(settings, host: host)
        let secretFile = settings.string(sharedSecretFile, "shared_secret_file")
        let secret: SharedSecret? = SecretSource.isGiven(file: secretFile) ? try SecretSource.read(file: secretFile) : nil
        let tls = try tlsConfiguration(settings)
        if appAppleID == nil {
            FileHandle.standardError.write(Data("warning: no --app-apple-id: production notifications are not checked to be for this app's Apple id.\n".utf8))
        }
        let logger = LogSetup.make(level: output.logLevel, format: output.logFormat)
        let store: any PollingStore
        do {
            store = try await Composition.database(database, writesOutbox: storeOptions.writesOutbox(settings)).open()
        } catch let error as StoreError {
            throw exitError(error.exitCode, "\(error)")
        }
        let receiver = NotificationReceiver(
            .init(bundleID: bundleID, appAppleID: appAppleID, sharedSecret: secret, trustedRoots: AppleRootCertificate.defaultRoots + roots), inbox: store, logger: logger)
        let scheme = tls == nil ? "http" : "https"
        // With event_endpoints in the config file, the deliverer runs in the same group.
        let events = try EventSettings.load(settings, configPath: storeOptions.config)
        let client = events.endpoints.isEmpty ? nil : try events.client()
        // The deliverer's metrics join the receiver's on its /metrics.
        let metrics = ReceiverMetrics()
        var alongside = client.map {
            EventDeliveryService.services(
                events.deliverer(store, client: $0, logger: logger, metrics: EventMetrics(registry: metrics.registry)), store: store)
        } ?? []
        // With the Server API's credentials in the config file (or the environment), Apple's refund
        // requests are answered alongside (docs/CONSUMPTION.md).
        let consumption = try ConsumptionSettings.serverAPI(settings, bundleID: bundleID, trustedRootFiles: trustedRootFile)
        let policy = try ConsumptionSettings.policy(settings, configPath: storeOptions.config)
        do {
            try await KeepAliveHTTPClient.withClient(consumption?.http ?? .init()) { http in
                if let consumption {
                    let sender = ConsumptionSender(ledger: store, client: ServerAPIClient(configuration: consumption.configuration, http: http), policy: policy, logger: logger)
                    alongside.append(ConsumptionService(sender, metrics: metrics))
                }
                try await ReceiverServer.runUntilSignalled(
                    receiver, metrics: metrics, settings: .init(host: host, port: port, maxBodyBytes: maxBody, tls: tls), logger: logger,
                    alongside: alongside
                ) { bound in
                    let shown = host.contains(":") ? "[\(host)]" : host
                    say("listening on \(scheme)://\(shown):\(bound)/\(ReceiverServer.notificationsPath) (V1 \(secret == nil ? "refused: no shared secret" : "accepted"); consumption requests \(consumption == nil ? "not answered: no Server API credentials" : "answered"))")
                }
            }
        } catch let error as ReceiverServerError {
            try? await client?.shutdown()
            try? await store.close()
            throw usageError("\(error)")
        } catch {
            try? await client?.shutdown()
            try? await store.close()
            throw exitError(.aborted, "the receiver stopped: \(error)")
        }
        try? await client?.shutdown()
        try? await store.close()
    }

    /// `HOST:PORT`, `[IPv6]:PORT` or `:PORT` (all interfaces).
    static func listenAddress(_ text: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw usageError("--listen must be HOST:PORT such as 127.0.0.1:8080 or 0.0.0.0:8443, got '\(text)'.")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host.isEmpty ? "0.0.0.0" : host, port)
    }

    /// Test roots, refused unless listening on loopback: a receiver on a public address must only
    /// ever trust Apple's root.
    private func trustedRoots(_ settings: Settings, host: String) throws -> [Certificate] {
        let files = settings.list(trustedRootFile, "trusted_root_file")
        guard !files.isEmpty else { return [] }
        guard AppStoreSettings.isLoopback(host) else {
            throw usageError("--trusted-root-file is only accepted while listening on a loopback address (a simulator), and --listen is \(host).")
        }
        return try files.map { path in
            do { return try TrustedRootFile.load(path) } catch { throw usageError("\(error).") }
        }
    }

    private func tlsConfiguration(_ settings: Settings) throws -> TLSConfiguration? {
        let certificate = settings.string(tlsCertificateFile, "tls_certificate_file")
        let key = settings.string(tlsKeyFile, "tls_key_file")
        switch (certificate, key) {
        case (nil, nil): return nil
        case (let certificate?, let key?):
            do {
                return try ReceiverServer.Settings.tls(certificateFile: certificate, keyFile: key)
            } catch {
                throw usageError("cannot use \(certificate) and \(key) for TLS: \(error). Give a PEM certificate chain and its PEM private key.")
            }
        default:
            throw usageError("--tls-certificate-file and --tls-key-file go together.")
        }
    }
}
