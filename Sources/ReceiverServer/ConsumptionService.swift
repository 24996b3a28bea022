import ServiceLifecycle
import StatusPolling

/// The consumption sender as a service of `notifications serve` (with Server API credentials
/// configured): a pass every `idle`, so a request is answered within seconds of being stored;
/// SIGTERM lets the request in flight finish and be recorded, then stops.
public struct ConsumptionService: Service {
    let sender: ConsumptionSender
    let idle: Duration
    let metrics: ReceiverMetrics?

    public init(_ sender: ConsumptionSender, idle: Duration = .seconds(1), metrics: ReceiverMetrics? = nil) {
        self.sender = sender
        self.idle = idle
        self.metrics = metrics
    }

    public func run() async throws {
        let stop = StopSignal()
        await withGracefulShutdownHandler {
            await sender.run(until: stop, idle: idle) { [metrics] pass in metrics?.record(pass) }
        } onGracefulShutdown: {
            stop.request()
        }
    }
}
