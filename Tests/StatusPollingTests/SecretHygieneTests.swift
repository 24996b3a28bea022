import Foundation
import Testing

/// The shared secret and the receipts never leave where they belong: the secret goes to Apple
/// only, receipts to Apple and the database only. Every output of a run is searched for them:
/// stdout, stderr at trace level in both formats, the metrics file, the run history and audit
/// trail, `runs`, `show`, `history`, and what a crash prints.
@Suite struct SecretHygieneTests {
    typealias T = AppleJSON.Transaction
    let sharedSecret = "shared-secret-7f1e9c3a-do-not-leak"
    func receipt(_ i: Int) -> String { "MIIreceipt-personal-data-\(i)-b64" }

    func valid(_ otid: String) -> String {
        AppleJSON.valid(latestReceipt: "MIIlatest-personal-data-\(otid)", transactions: [T(originalTransactionID: otid, expiresMs: AppleJSON.t0 + 60 * AppleJSON.day)],
                        renewals: [AppleJSON.Renewal(originalTransactionID: otid)])
    }

    /// Everything that must not hold `needle`, by name.
    func leaks(of needles: [String], in outputs: [String: String]) -> [String] {
        outputs.flatMap { name, text in needles.filter { text.contains($0) }.map { "\(name) holds \($0)" } }.sorted()
    }

    @Test func noOutputOfARunHoldsTheSecretOrAReceipt() async throws {
        try await withTemporaryDatabase { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                let secretFile = db.directory.appendingPathComponent("secret").path
                try Data((sharedSecret + "\n").utf8).write(to: URL(fileURLWithPath: secretFile))
                for i in 0..<6 {
                    try db.insert(userID: "u\(i)", receipt: receipt(i))
                    // Successes, a retried 503, a final failure, an outage page, a bundle mismatch.
                    let replies: [ScriptedAppStore.Reply] = switch i {
                    case 0, 1: [.json(valid("o\(i)"))]
                    case 2: [.http(503), .json(valid("o2"))]
                    case 3: [.json(AppleJSON.status(21003))]
                    case 4: [.html]
                    default: [.json(AppleJSON.valid(bundleID: "com.other.app", transactions: [T(originalTransactionID: "o5")], renewals: []))]
                    }
                    await server.script(receipt(i), replies)
                }
                let metrics = db.directory.appendingPathComponent("metrics.prom").path
                let common = ["--database", db.path, "--bundle-id", AppleJSON.bundleID, "--production-url", production, "--sandbox-url", sandbox,
                              "--now", "2026-01-29T00:00:00Z", "--max-attempts", "2", "--log-level", "trace"]
                var outputs: [String: String] = [:]
                let text = try await StatusPollerProcess.launch(["run"] + common + ["--report", "text"], environment: ["APPSTORE_SHARED_SECRET": sharedSecret]).outcome()
                #expect(text.status == 1)
                outputs["text stdout"] = text.stdout
                outputs["text stderr"] = text.stderr
                let json = try await StatusPollerProcess.launch(
                    ["backfill", "--all", "--shared-secret-file", secretFile, "--log-format", "json", "--report", "json", "--metrics-file", metrics] + common).outcome()
                #expect(json.status == 1)
                outputs["json stdout"] = json.stdout
                outputs["json stderr"] = json.stderr
                outputs["metrics file"] = try String(contentsOfFile: metrics, encoding: .utf8)
                // The logs said something about every row: they were really searched.
                #expect(text.stderr.contains("subscription.id"))
                #expect(json.stderr.contains("\"subscription.id\""))
                outputs.merge(try await storedOutputs(db, users: ("u0", "u3"))) { $1 }
                // Apple did get the secret: the search is for a value that was really in play.
                #expect(await server.received.allSatisfy { $0.password == sharedSecret })

                let receipts = (0..<6).map(receipt) + ["MIIlatest-personal-data-o0", "MIIlatest-personal-data-o1"]
                #expect(leaks(of: [sharedSecret] + receipts, in: outputs) == [])
            }
        }
    }

    @Test func whatACrashPrintsHoldsNeitherTheSecretNorAReceipt() async throws {
        try await withTemporaryDatabase { db in
            try await ScriptedAppStore.withServer { server, production, sandbox in
                try db.insert(userID: "u0", receipt: receipt(0))
                await server.script(receipt(0), [.never])
                let process = try await StatusPollerProcess.launch(
                    ["run", "--database", db.path, "--bundle-id", AppleJSON.bundleID, "--production-url", production, "--sandbox-url", sandbox,
                     "--now", "2026-01-29T00:00:00Z", "--log-level", "trace", "--request-timeout", "300"],
                    environment: ["APPSTORE_SHARED_SECRET": sharedSecret, "SWIFT_BACKTRACE": "enable=yes,interactive=no,color=no"])
                #expect(try await eventually { await server.received.count == 1 })
                // A crash while the secret and the receipt are in memory: the runtime's backtrace.
                // For a signal sent from outside, the backtracer prints and then returns, so the
                // process is killed once the backtrace is complete.
                process.signal(SIGSEGV)
                let printed = try await eventually { process.stderrSoFar.contains("Backtrace took") }
                process.signal(SIGKILL)
                let crashed = try await process.outcome()
                #expect(printed)
                #expect(crashed.stderr.contains("*** Program crashed: Bad pointer dereference"))
                #expect(crashed.stderr.contains("Thread 0"))
                #expect(leaks(of: [sharedSecret, receipt(0)], in: ["crash stdout": crashed.stdout, "crash stderr": crashed.stderr]) == [])
            }
        }
    }
}
