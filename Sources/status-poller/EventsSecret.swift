import ArgumentParser
import StatusPolling

/// `status-poller events secret`: a new signing secret, for an endpoint's secret file.
struct EventsSecret: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret",
        abstract: "Print a new random webhook signing secret (whsec_…, 32 bytes) for an endpoint's secret_file and the web service's verifier.")

    func run() async throws {
        print(WebhookSecret.generate())
    }
}
