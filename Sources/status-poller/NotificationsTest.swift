import AppStoreBackends
import ArgumentParser
import EntitlementCore
import Foundation
import PollerCommandLine
import StatusPolling

/// `status-poller notifications test`: asks Apple to send a TEST notification to the URL set in
/// App Store Connect, then asks how the delivery went — an operator's check that Apple reaches
/// the receiver.
struct NotificationsTest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Ask Apple to send a TEST notification to your receiver and report whether it got through (Server API credentials needed).",
        discussion: """
            Exit 0 when Apple's attempt succeeded; 1 when Apple tried and failed (its result, such as \
            TIMED_OUT or UNSUCCESSFUL_HTTP_RESPONSE_CODE, is printed) or reported nothing within \
            --wait-seconds. Apple allows one such request a second; production answers 401 until the app \
            has a production release.
            """)

    @OptionGroup var appStore: AppStoreOptions

    @OptionGroup(title: "App Store Server API") var serverAPI: ServerAPIOptions

    @OptionGroup var storeOptions: StoreOptions

    @Option(help: "production or sandbox (default: sandbox).")
    var environment: String = "sandbox"

    @Option(help: "How long to wait for Apple's report of the delivery, in seconds (default: 60).")
    var waitSeconds: Int = 60

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard ["production", "sandbox"].contains(environment) else { throw ValidationError("--environment must be production or sandbox, got '\(environment)'.") }
        guard (1...600).contains(waitSeconds) else { throw ValidationError("--wait-seconds must be between 1 and 600.") }
    }

    func run() async throws {
        let settings = try await storeOptions.settings()
        let appStore = try self.appStore.resolve(settings)
        let configuration = try self.serverAPI.resolve(settings, allowInsecureHTTP: appStore.allowInsecureHTTP)
            .notificationsConfiguration(appStore: appStore, purpose: "a test notification is requested")
        let logger = LogSetup.make(level: try self.output.resolve(settings).logLevel)
        let target: AppStoreEnvironment = environment == "production" ? .production : .sandbox
        let line = try await KeepAliveHTTPClient.withClient(appStore.httpConfiguration) { http in
            let client = ServerAPIClient(configuration: configuration, http: http)
            do {
                let token = try await client.requestTestNotification(in: target, logger: logger)
                let deadline = ContinuousClock.now + .seconds(waitSeconds)
                while ContinuousClock.now < deadline {
                    // Apple allows one status request a second.
                    try await Task.sleep(for: .seconds(1))
                    guard let status = try await client.testNotificationStatus(token, in: target, logger: logger),
                        let last = status.sendAttempts?.last
                    else { continue }
                    let when = last.attemptDate.map { " at \(Display.time($0))" } ?? ""
                    let result = last.sendAttemptResult ?? "an unknown result"
                    if result == "SUCCESS" { return (true, "Apple reached the receiver\(when) (\(target.rawValue), attempt \(status.sendAttempts!.count)).") }
                    return (false, "Apple could not deliver the test notification\(when): \(result). Check the URL in App Store Connect, TLS and the receiver's log.")
                }
                return (false, "Apple reported no delivery attempt within \(waitSeconds) s; try again with a longer --wait-seconds.")
            } catch let failure as VerificationFailure {
                throw exitError(.aborted, "the \(target.rawValue) test notification could not be requested: \(failure.detail).")
            } catch let abort as RunAbort {
                throw exitError(.aborted, "\(abort)")
            }
        }
        say(line.1)
        if !line.0 { throw ExitCode(1) }
    }
}
