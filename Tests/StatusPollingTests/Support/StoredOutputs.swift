import GRDB
import Testing

/// What an operator can read back after a run, by name, for the secret-hygiene searches: `runs`,
/// `show` and `history` (text and JSON) for two users, and the run history, audit trail and
/// `last_error`s straight from the database.
func storedOutputs(_ db: TemporaryDatabase, users: (String, String)) async throws -> [String: String] {
    var outputs: [String: String] = [:]
    for command in [["runs"], ["show", "--user-id", users.0], ["history", "--user-id", users.0], ["history", "--user-id", users.1, "--format", "json"]] {
        let outcome = try await StatusPollerProcess.launch(command + ["--database", db.path]).outcome()
        #expect(outcome.status == 0, "\(command): \(outcome.stderr)")
        outputs[command.joined(separator: " ")] = outcome.stdout + outcome.stderr
    }
    outputs["run history and audit trail"] = try await db.webService.read { d in
        let runs = try Row.fetchAll(d, sql: "SELECT * FROM poll_runs").map(\.description)
        let events = try Row.fetchAll(d, sql: "SELECT * FROM subscription_events").map(\.description)
        let errors = try String.fetchAll(d, sql: "SELECT coalesce(last_error, '') FROM subscriptions")
        return (runs + events + errors).joined(separator: "\n")
    }
    return outputs
}
