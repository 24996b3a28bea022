import Logging
import ServiceLifecycle
import StatusPolling

/// The deliverer as a service of a `ServiceGroup` (`events deliver`, and `notifications serve`
/// with endpoints configured): SIGTERM lets the batch in flight finish and be recorded, then stops.
public struct EventDeliveryService: Service {
    let deliverer: EventDeliverer
    let idle: Duration
    let wakeUp: Doorbell?

    public init(_ deliverer: EventDeliverer, idle: Duration = .milliseconds(250), wakeUp: Doorbell? = nil) {
        self.deliverer = deliverer
        self.idle = idle
        self.wakeUp = wakeUp
    }

    public func run() async throws {
        let stop = StopSignal()
        await withGracefulShutdownHandler {
            await deliverer.run(until: stop, idle: idle, wakeUp: wakeUp)
        } onGracefulShutdown: {
            stop.request()
        }
    }

    /// The deliverer's services: on a store that tells of new events (PostgreSQL's NOTIFY), a
    /// listener ringing the deliverer's doorbell, then the deliverer.
    public static func services(_ deliverer: EventDeliverer, store: any EventOutbox) -> [any Service] {
        guard store.ringsOnNewEvents else { return [EventDeliveryService(deliverer)] }
        let bell = Doorbell()
        return [EventWakeUpService(store, bell: bell), EventDeliveryService(deliverer, wakeUp: bell)]
    }

    /// Runs `services` (this one and, for instance, a listener that rings `wakeUp`) until SIGTERM or SIGINT.
    public static func runUntilSignalled(_ services: [any Service], logger: Logger) async throws {
        try await ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)).run()
    }
}

/// Listens for new events (``EventOutbox/ringOnNewEvents(_:)``) and rings the deliverer's
/// doorbell, until shutdown.
public struct EventWakeUpService: Service {
    let source: any EventOutbox
    let bell: Doorbell

    public init(_ source: any EventOutbox, bell: Doorbell) {
        self.source = source
        self.bell = bell
    }

    public func run() async throws {
        try await cancelWhenGracefulShutdown { try await source.ringOnNewEvents(bell) }
    }
}
