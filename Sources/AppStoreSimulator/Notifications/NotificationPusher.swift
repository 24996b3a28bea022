import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import ServiceLifecycle

/// Posts the simulated App Store's notifications to the app's URL, one try at a time in the order
/// Apple makes them (``NotificationOutbox``), and records what came of each: a 200–206 delivers,
/// anything else (a 503, a refused connection, a timeout) is tried again on Apple's schedule.
public struct NotificationPusher: Sendable {
    /// What one ``push(through:receiverIsUp:arriving:)`` did.
    public struct Statistics: Sendable, Equatable {
        /// Bodies posted (a lost try posts nothing).
        public var posted = 0
        public var delivered = 0
        /// Tries that never reached the receiver: lost on the way, or the receiver was down.
        public var lost = 0
        /// Tries the receiver answered outside 200–206, or that failed on the connection.
        public var refused = 0
        /// Tries the receiver took that Apple counted as timed out, so it sends them again.
        public var duplicated = 0

        public init() {}

        public static func += (lhs: inout Statistics, rhs: Statistics) {
            lhs.posted += rhs.posted
            lhs.delivered += rhs.delivered
            lhs.lost += rhs.lost
            lhs.refused += rhs.refused
            lhs.duplicated += rhs.duplicated
        }
    }

    public let simulator: AppStoreSimulator
    public let url: String
    let client: HTTPClient
    let timeout: TimeAmount

    public init(simulator: AppStoreSimulator, url: String, client: HTTPClient = .shared, timeout: Duration = .seconds(30)) {
        self.simulator = simulator
        self.url = url
        self.client = client
        self.timeout = .milliseconds(Int64(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
    }

    /// Makes every try due through `ms`. `receiverIsUp(at)` false counts the try as lost (a
    /// receiver down for a deploy); `arriving(at)` runs before each post with the try's
    /// simulated instant (the demo's receiver reads its clock from it).
    public func push(
        through ms: Int64, receiverIsUp: @Sendable (Int64) -> Bool = { _ in true }, arriving: @Sendable (Int64) -> Void = { _ in }
    ) async -> Statistics {
        var statistics = Statistics()
        while let attempt = simulator.nextNotificationAttempt(through: ms) {
            guard !attempt.lost, receiverIsUp(attempt.atMs) else {
                statistics.lost += 1
                simulator.recordNotificationAttempt(attempt, result: .noResponse)
                continue
            }
            arriving(attempt.atMs)
            statistics.posted += 1
            let result: SendAttempt.Result
            do {
                var request = HTTPClientRequest(url: url)
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: attempt.body))
                let response = try await client.execute(request, timeout: timeout)
                _ = try await response.body.collect(upTo: 1 << 16)
                result = (200...206).contains(response.status.code) ? (attempt.duplicated ? .timedOut : .success) : .unsuccessfulHTTPResponseCode
            } catch {
                result = .noResponse
            }
            switch result {
            case .success: statistics.delivered += 1
            case .timedOut: statistics.duplicated += 1
            case .noResponse, .unsuccessfulHTTPResponseCode: statistics.refused += 1
            }
            simulator.recordNotificationAttempt(attempt, result: result)
        }
        return statistics
    }
}

extension NotificationPusher {
    /// The pusher as a service beside the simulator's server (`simulate --notify-url`): every
    /// quarter second it makes the tries due at the simulated clock, so moving the clock forward
    /// (`POST /simulator/clock`) posts the events of the time it skipped, in order.
    public struct Service: ServiceLifecycle.Service {
        let pusher: NotificationPusher
        let logger: Logger

        public init(_ pusher: NotificationPusher, logger: Logger) {
            self.pusher = pusher
            self.logger = logger
        }

        public func run() async throws {
            await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    let done = await pusher.push(through: pusher.simulator.nowMs)
                    if done.posted + done.lost > 0 {
                        logger.info("notifications", metadata: [
                            "posted": "\(done.posted)", "delivered": "\(done.delivered)", "lost": "\(done.lost)", "refused": "\(done.refused)",
                            "duplicated": "\(done.duplicated)",
                        ])
                    }
                    try? await Task.sleep(for: .milliseconds(250))
                }
            }
        }
    }
}
