import ArgumentParser
import Foundation
import StatusPolling

/// `status-poller consumption send`: answers every consumption request due, for cron without the receiver.
struct ConsumptionSend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send Apple the consumption information of every refund request due (what `notifications serve` does continuously).",
        discussion: """
            Each pending request is answered through Send Consumption Information (App Store Server API v2) with \
            the config file's policy, or settled without sending: no_consent (the web service recorded no consent \
            in consumption_consents, or nothing about the customer within the 12 hours; until then the request is \
            looked at again) or expired (past its 12 hours). A 5xx or a 429 is retried at a later run (after \
            Apple's Retry-After). A request Apple took (202) is never sent again. Prints what it did. Exit 0; 3 when \
            Apple refuses the credentials; 2 on a bad setting.
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var appStore: AppStoreOptions
    @OptionGroup(title: "App Store Server API") var serverAPI: ServerAPIOptions

    @Option(help: "Output: text or json.")
    var format: ReportFormat = .text

    func run() async throws {
        let settings = try await storeOptions.settings()
        let policy = try ConsumptionSettings.policy(settings, configPath: storeOptions.config)
        // Apple allows Send Consumption Information 50 requests a second.
        let pass = try await SupportSession.run(
            store: storeOptions, appStore: appStore, serverAPI: serverAPI, endpointRate: 50, purpose: "consumption requests are answered"
        ) { session in
            try await ConsumptionSender(ledger: session.store, client: session.client, policy: policy, logger: session.logger).sendDue()
        }
        if format == .json {
            let data = try JSONEncoder.sorted.encode(pass)
            return print(String(decoding: data, as: UTF8.self))
        }
        print(
            "sent \(pass.sent)  refused \(pass.refused)  no consent \(pass.noConsent)  expired \(pass.expired)  retried later \(pass.retried)"
                + "  awaiting consent \(pass.awaitingConsent)")
    }
}

extension JSONEncoder {
    /// Keys sorted, for output a script reads.
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
