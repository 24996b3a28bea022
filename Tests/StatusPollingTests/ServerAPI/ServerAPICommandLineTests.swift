import Crypto
import Foundation
import Testing

/// The Server API's options on the real binary: what it refuses before any request (exit 2), and
/// that the key never shows.
@Suite struct ServerAPICommandLineTests {
    static let pem = P256.Signing.PrivateKey().pemRepresentation

    func statusPoller(_ arguments: [String], environment: [String: String] = [:]) async throws -> StatusPollerProcess.Outcome {
        try await StatusPollerProcess.launch(arguments, environment: environment).outcome()
    }

    @Test func helpNamesTheBackendsAndTheKeySource() async throws {
        let help = try await statusPoller(["run", "--help"])
        #expect(help.stdout.contains("--backend <backend>"))
        #expect(help.stdout.contains("APPSTORE_PRIVATE_KEY"))
        #expect(help.stdout.contains("--server-api-rate"))
    }

    @Test func aTrustedRootIsRefusedUnlessEveryServerAPIURLIsLoopback() async throws {
        try await withTemporaryDatabase { db in
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("root-\(UUID().uuidString).pem")
            try TestPKI().root.serializeAsPEM().pemString.write(to: root, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: root) }
            let key = ["APPSTORE_PRIVATE_KEY": Self.pem]
            let base = ["run", "--database", db.path, "--bundle-id", "com.example.premium", "--backend", "server-api",
                        "--issuer-id", "57246542-96fe-1a63-e053-0824d011072a", "--key-id", "ABCDEFGHIJ", "--trusted-root-file", root.path]
            // The default URLs are Apple's: refused.
            let apple = try await statusPoller(base, environment: key)
            #expect(apple.status == 2)
            #expect(apple.stderr.contains("--trusted-root-file is only accepted when every Server API URL is on loopback (a simulator), and --server-api-url is https://api.storekit.apple.com."))
            // Production on loopback, the sandbox still Apple's: refused too.
            let half = try await statusPoller(base + ["--server-api-url", "http://127.0.0.1:9"], environment: key)
            #expect(half.status == 2)
            #expect(half.stderr.contains("--server-api-sandbox-url is https://api.storekit-sandbox.apple.com"))
            #expect(try await db.webService.read { d in try Int.fetchOne(d, sql: "SELECT count(*) FROM poll_runs") } == 0)
            // Both on loopback: accepted (no rows, so no request), and recorded without the key.
            let loopback = try await statusPoller(base + ["--server-api-url", "http://127.0.0.1:9", "--server-api-sandbox-url", "http://localhost:9/sandbox", "--report", "json"], environment: key)
            #expect(loopback.status == 0, "\(loopback.stderr)")
            let options = try await db.webService.read { d in try String.fetchOne(d, sql: "SELECT options FROM poll_runs ORDER BY id DESC LIMIT 1") } ?? ""
            #expect(options.contains(#""backend":"server-api""#), "\(options)")
            #expect(options.contains(#""key_id":"ABCDEFGHIJ""#))
            #expect(!options.contains("PRIVATE KEY"))
        }
    }

    @Test func missingOrBadCredentialsSayWhatToDo() async throws {
        try await withTemporaryDatabase { db in
            let base = ["run", "--database", db.path, "--bundle-id", "com.example.premium", "--backend", "server-api"]
            let noIDs = try await statusPoller(base)
            #expect(noIDs.status == 2)
            #expect(noIDs.stderr.contains("the App Store Server API needs --issuer-id and --key-id"))
            let ids = base + ["--issuer-id", "57246542-96fe-1a63-e053-0824d011072a", "--key-id", "ABCDEFGHIJ"]
            let noKey = try await statusPoller(ids)
            #expect(noKey.status == 2)
            #expect(noKey.stderr.contains("no In-App Purchase key. Set APPSTORE_PRIVATE_KEY to the .p8 file's text or pass --private-key-file PATH"))
            let notPEM = try await statusPoller(ids, environment: ["APPSTORE_PRIVATE_KEY": "MIGTAgEAMBMGByqGSM49AgEGCCqGSM49"])
            #expect(notPEM.status == 2)
            #expect(notPEM.stderr.contains("the In-App Purchase key is not PEM text"))
            #expect(!notPEM.stderr.contains("MIGTAgEAMBMGByqGSM49"))
            let missingFile = try await statusPoller(ids + ["--private-key-file", "/nonexistent/key.p8"])
            #expect(missingFile.status == 2)
            #expect(missingFile.stderr.contains("cannot read the In-App Purchase key file /nonexistent/key.p8"))
            let badBackend = try await statusPoller(base + ["--backend", "storekit"])
            #expect(badBackend.status == 2)
            let badRate = try await statusPoller(ids + ["--server-api-rate", "0"], environment: ["APPSTORE_PRIVATE_KEY": Self.pem])
            #expect(badRate.status == 2)
            #expect(badRate.stderr.contains("--server-api-rate must be between 1 and 1000 requests per second, got 0."))
            // auto with neither backend configured asks for a secret.
            let auto = try await statusPoller(["run", "--database", db.path, "--bundle-id", "x", "--backend", "auto"])
            #expect(auto.status == 2)
            #expect(auto.stderr.contains("no App Store shared secret"))
        }
    }
}
