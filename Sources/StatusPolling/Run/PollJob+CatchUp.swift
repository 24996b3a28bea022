import AppStoreBackends
import EntitlementCore
import Logging

extension PollJob {
    /// What a nightly run reads from Apple before it polls, under its run lock: the notification
    /// history since the last catch-up (through the receiver's ingest, so a receiver that was down
    /// loses nothing and the poll skips what notifications covered), then how far each pending mass
    /// renewal-date extension got. Either failing is a warning and a line of the report, never the
    /// run's end: the poll is the safety net.
    public struct CatchUp: Sendable {
        /// The Server API client that reads the history (at the notification endpoints' rate).
        public var client: ServerAPIClient
        /// How the receiver verifies what the history holds.
        public var receiver: NotificationReceiver.Configuration
        public var environments: [AppStoreEnvironment]

        public init(client: ServerAPIClient, receiver: NotificationReceiver.Configuration, environments: [AppStoreEnvironment] = [.production, .sandbox]) {
            self.client = client
            self.receiver = receiver
            self.environments = environments
        }
    }

    /// Catches up on `store` at the run's clock: each environment, then the mass extensions.
    func catchUp(_ catchUp: CatchUp, store: any PollingStore, logger: Logger) async -> CatchUpSummary {
        var summary = CatchUpSummary()
        let receiver = NotificationReceiver(catchUp.receiver, inbox: store, logger: logger)
        let history = NotificationCatchUp(client: catchUp.client, receiver: receiver, inbox: store)
        for environment in catchUp.environments {
            do {
                summary.environments.append(try await history.run(environment, nowMs: configuration.nowMs, logger: logger))
            } catch {
                summary.failures[environment] = "\(error)"
                logger.warning(
                    "could not catch up with Apple's notification history; the poll goes on, asking every row in a window not fresh by --fresh-within, and the next catch-up starts from the same checkpoint",
                    metadata: ["environment": "\(environment.rawValue)", "error": "\(error)"])
            }
        }
        do {
            let desk = SupportDesk(store: store, bundleID: configuration.bundleID)
            for request in try await desk.followMassExtensions(client: catchUp.client, nowMs: configuration.nowMs, logger: logger)
            where request.checkedAtMs == configuration.nowMs {
                summary.massExtensionsChecked += 1
                if request.completedAtMs != nil { summary.massExtensionsCompleted += 1 }
                logger.notice(
                    request.completedAtMs == nil ? "a mass renewal-date extension is in progress" : "a mass renewal-date extension is complete",
                    metadata: [
                        "request_identifier": "\(request.requestIdentifier)", "product_id": "\(request.productID)",
                        "succeeded": "\(request.succeeded.map(String.init) ?? "-")", "failed": "\(request.failed.map(String.init) ?? "-")",
                    ])
            }
        } catch {
            summary.massExtensionsFailure = "\(error)"
            logger.warning("could not ask Apple how far the mass renewal-date extensions got; `extend status` or the next night asks again", metadata: ["error": "\(error)"])
        }
        return summary
    }
}
