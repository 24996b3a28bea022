import Logging
import ServiceLifecycle
import StatusPolling

/// Gives unmatched notifications to the rows the web service enrolled since with their
/// `app_account_token`: at start, then every `interval`, until the receiver shuts down.
struct WaitingNotificationAdopter: Service {
    let receiver: NotificationReceiver
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    _ = try await receiver.adoptWaiting()
                } catch where Task.isCancelled || error is CancellationError {
                    return
                } catch {
                    logger.warning("could not look for notifications waiting for a row; trying again later", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
