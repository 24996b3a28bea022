import Crypto
import Foundation
import Testing

/// The In-App Purchase key, the bearer tokens made from it, and Apple's signed payloads never leave
/// where they belong: every output of a Server API run and backfill is searched for them (stdout,
/// stderr at trace level in both formats, the metrics file, the run history and audit trail,
/// `runs`, `show`, `history`).
@Suite struct ServerAPISecretHygieneTests {
    @Test func noOutputHoldsTheKeyATokenOrASignedPayload() async throws {
        let pem = P256.Signing.PrivateKey().pemRepresentation
        let pemBody = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)
        let answers = ServerAPIAnswers(pki: try TestPKI())
        try await withTemporaryDatabase { db in
            try await ScriptedServerAPI.withServer { server, production, sandbox in
                let keyFile = db.directory.appendingPathComponent("SubscriptionKey_ABCDEFGHIJ.p8").path
                try Data(pem.utf8).write(to: URL(fileURLWithPath: keyFile))
                let root = db.directory.appendingPathComponent("root.pem")
                try answers.pki.root.serializeAsPEM().pemString.write(to: root, atomically: true, encoding: .utf8)
                var signed: [String] = []
                for i in 0..<5 {
                    let otid = "10000002\(i)"
                    try db.insert(userID: "u\(i)", receipt: "MIIreceipt-personal-data-\(i)", .init(originalTransactionID: otid, environment: "Production", expiresAt: 1_789_945_200_000))
                    let signer = i == 4 ? ServerAPIAnswers(pki: try TestPKI(.init(rootName: "Other"))) : answers
                    let entry = signer.lastTransaction(otid)
                    signed += [entry["signedTransactionInfo"] as! String, entry["signedRenewalInfo"] as! String]
                    // Successes, a retried 5000001, a final 4000006, and a payload under another root.
                    let replies: [ScriptedAppStore.Reply] = switch i {
                    case 0, 1: [.json(answers.statuses([entry]))]
                    case 2: [.http(500, body: #"{"errorCode":5000001,"errorMessage":"retry"}"#), .json(answers.statuses([entry]))]
                    case 3: [.http(400, body: #"{"errorCode":4000006,"errorMessage":"Invalid transaction id."}"#)]
                    default: [.json(signer.statuses([entry]))]
                    }
                    await server.script(otid, replies)
                }
                try db.insert(userID: "u5", receipt: "MIIreceipt-personal-data-5")  // a receipt that is no app receipt
                let metrics = db.directory.appendingPathComponent("metrics.prom").path
                let common = ["--database", db.path, "--bundle-id", ServerAPIAnswers.bundle, "--backend", "server-api",
                              "--server-api-url", production, "--server-api-sandbox-url", sandbox, "--trusted-root-file", root.path,
                              "--issuer-id", "57246542-96fe-1a63-e053-0824d011072a", "--key-id", "ABCDEFGHIJ",
                              "--now", "2026-09-21T00:00:00Z", "--max-attempts", "2", "--log-level", "trace"]
                var outputs: [String: String] = [:]
                let text = try await StatusPollerProcess.launch(["run"] + common + ["--report", "text"], environment: ["APPSTORE_PRIVATE_KEY": pem]).outcome()
                #expect(text.status == 1, "\(text.stderr)")
                outputs["text stdout"] = text.stdout
                outputs["text stderr"] = text.stderr
                let json = try await StatusPollerProcess.launch(
                    ["backfill", "--all", "--private-key-file", keyFile, "--log-format", "json", "--report", "json", "--metrics-file", metrics] + common).outcome()
                #expect(json.status == 1, "\(json.stderr)")
                outputs["json stdout"] = json.stdout
                outputs["json stderr"] = json.stderr
                outputs["metrics file"] = try String(contentsOfFile: metrics, encoding: .utf8)
                #expect(text.stderr.contains("subscription.id"))
                #expect(text.stdout.contains("untrusted_signature"))
                #expect(text.stdout.contains("receipt_unreadable"))
                outputs.merge(try await storedOutputs(db, users: ("u0", "u4"))) { $1 }
                // The tokens Apple got: the search is for values that were really in play.
                let tokens = Set(await server.received.compactMap(\.authorization).map { String($0.dropFirst("Bearer ".count)) })
                #expect(!tokens.isEmpty)
                let needles = pemBody + Array(tokens) + signed + (0..<6).map { "MIIreceipt-personal-data-\($0)" }
                let leaks = outputs.flatMap { name, text in needles.filter { text.contains($0) }.map { "\(name) holds \($0.prefix(24))…" } }.sorted()
                #expect(leaks == [])
            }
        }
    }
}
