import AppStoreBackends
import AppStoreSimulator
import EntitlementCore
import Logging
import ReceiverServer
import StatusPolling
import Synchronization

/// The demo's App Store Server Notifications, played as production runs them: the simulator posts
/// each lifecycle event to a receiver on loopback (the `ReceiverServer` of `notifications serve`)
/// whose clock is the simulated instant of each try, and before each night's poll a catch-up
/// reads Apple's notification history (V2, with the Server API) into the rows.
final class NotificationPlay: Sendable {
    let simulator: AppStoreSimulator
    let pusher: NotificationPusher
    let receiver: NotificationReceiver
    /// The receiver's clock: the simulated instant of the try being posted.
    final class Clock: Sendable {
        private let ms: Mutex<Int64>
        init(_ ms: Int64) { self.ms = Mutex(ms) }
        var now: Int64 { ms.withLock { $0 } }
        func set(_ value: Int64) { ms.withLock { $0 = value } }
    }

    let clock: Clock
    /// Simulated stretches when the receiver is down (a deploy, an expired certificate).
    let downtime: [ClosedRange<Int64>]

    private init(simulator: AppStoreSimulator, pusher: NotificationPusher, receiver: NotificationReceiver, clock: Clock, downtime: [ClosedRange<Int64>]) {
        self.simulator = simulator
        self.pusher = pusher
        self.receiver = receiver
        self.clock = clock
        self.downtime = downtime
    }

    /// Turns the simulator's notifications on (V1 for verifyReceipt, V2 otherwise) from `fromMs`
    /// and runs `body` with a receiver listening.
    static func withRunning<T: Sendable>(
        _ configuration: DemoConfiguration, simulator: AppStoreSimulator, inbox: any NotificationInbox, fromMs: Int64, logger: Logger,
        _ body: (NotificationPlay) async throws -> T
    ) async throws -> T {
        let population = simulator.population.configuration
        simulator.sendNotifications(version: configuration.backend == .verifyReceipt ? 1 : 2, faults: configuration.notificationFaults)
        let clock = Clock(fromMs)
        let receiver = NotificationReceiver(
            .init(
                bundleID: population.bundleID, appAppleID: population.appAppleID, sharedSecret: SharedSecret(population.sharedSecret),
                trustedRoots: AppleRootCertificate.defaultRoots + [simulator.pki.root]),
            inbox: inbox, logger: logger, clock: { clock.now })
        let downtime = configuration.receiverDownNights.map { nights in
            [configuration.clock(night: nights.lowerBound - 1)...configuration.clock(night: nights.upperBound)]
        } ?? []
        return try await ReceiverServer.withRunning(receiver, metrics: ReceiverMetrics(), settings: .init(host: "127.0.0.1", port: 0), logger: logger) { port in
            let pusher = NotificationPusher(simulator: simulator, url: "http://127.0.0.1:\(port)/app-store/notifications")
            return try await body(NotificationPlay(simulator: simulator, pusher: pusher, receiver: receiver, clock: clock, downtime: downtime))
        }
    }

    /// Posts every try due through `ms`, each at its simulated instant.
    func deliver(through ms: Int64) async -> NotificationPusher.Statistics {
        let downtime = downtime
        return await pusher.push(
            through: ms, receiverIsUp: { at in !downtime.contains { $0.contains(at) } }, arriving: { [clock] at in clock.set(at) })
    }

    /// The run's catch-up (`run` does it first when Server API credentials are configured): both
    /// environments; returns the requests it made and, as `run` gives its selection, where each
    /// environment's gapless reading began. A failure is the run's warning, not the demo's end.
    func catchUp(_ client: ServerAPIClient, inbox: any NotificationInbox, nowMs: Int64, logger: Logger) async -> (pages: Int, coveredFrom: [String: Int64]) {
        clock.set(nowMs)  // what the catch-up takes is received at the run's clock
        let catchUp = NotificationCatchUp(client: client, receiver: receiver, inbox: inbox)
        var pages = 0
        var covered: [String: Int64] = [:]
        for environment in [AppStoreEnvironment.production, .sandbox] {
            do {
                let report = try await catchUp.run(environment, nowMs: nowMs, logger: logger)
                pages += report.pages
                covered[environment.rawValue] = report.coveredFromMs
            } catch {
                logger.warning("demo catch-up failed", metadata: ["environment": "\(environment)", "error": "\(error)"])
            }
        }
        return (pages, covered)
    }
}
