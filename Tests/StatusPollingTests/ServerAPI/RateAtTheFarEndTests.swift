import AsyncHTTPClient
import Hummingbird
import NIOCore
import Synchronization
import Testing
@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The rate limit as Apple sees it: requests sent through one ``RequestRateLimiter`` over real
/// HTTP to a loopback server that stamps each arrival, counted in every sliding second there.
///
/// The limiter controls when a request leaves, not how long it takes on the way; so the test holds
/// it to what it controls, whatever the machine's speed: every `rate + 1` consecutive departures
/// (as the limiter counted them) span 1.1 s or more, and a second at the far end may hold more
/// than the rate only if the requests in it spent more than 100 ms longer on the way one than
/// another (a machine busy enough to hold one back). On an idle machine no second needs that
/// excuse; with the limiter's margin taken away (spacing over exactly one second), seconds at the
/// far end hold one request too many with transit times a millisecond apart, and the test fails.
@Suite struct RateAtTheFarEndTests {
    struct Stamp: Sendable {
        var departed: ContinuousClock.Instant
        var arrived: ContinuousClock.Instant
        var transit: Duration { arrived - departed }
    }

    @Test(arguments: [1, 5, 20, 40, 50])
    func noSecondAtTheFarEndHoldsMoreThanTheRate(rate: Int) async throws {
        let requests = rate * 3 + 1
        let arrivals = Mutex<[Int: ContinuousClock.Instant]>([:])
        let router = Router()
        router.post("hit/:index") { _, context -> HTTPResponse.Status in
            let now = ContinuousClock.now
            let index = Int(context.parameters.get("index") ?? "") ?? -1
            arrivals.withLock { $0[index] = now }
            return .ok
        }
        let departures = try await withLoopbackServer(router) { port in
            let limiter = RequestRateLimiter(perSecond: rate)
            return try await withThrowingTaskGroup(of: (Int, ContinuousClock.Instant).self) { group in
                for index in 0..<requests {
                    group.addTask {
                        let departed = try await limiter.acquire()
                        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/hit/\(index)")
                        request.method = .POST
                        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(Int64(Patience.boundSeconds)))
                        #expect(response.status == .ok)
                        return (index, departed)
                    }
                }
                var departures: [Int: ContinuousClock.Instant] = [:]
                for try await (index, departed) in group { departures[index] = departed }
                return departures
            }
        }
        let arrived = arrivals.withLock { $0 }
        #expect(arrived.count == requests)
        let stamps = (0..<requests).compactMap { index in
            arrived[index].flatMap { at in departures[index].map { Stamp(departed: $0, arrived: at) } }
        }
        #expect(stamps.count == requests)

        let byDeparture = stamps.sorted { $0.departed < $1.departed }
        for index in rate..<byDeparture.count {
            #expect(byDeparture[index].departed - byDeparture[index - rate].departed >= RequestRateLimiter.spacingWindow)
        }
        let byArrival = stamps.sorted { $0.arrived < $1.arrived }
        var unexplained: [Duration] = []
        for index in rate..<byArrival.count {
            let window = byArrival[(index - rate)...index]
            guard window.last!.arrived - window.first!.arrived < .seconds(1) else { continue }
            let spread = window.map(\.transit).max()! - window.map(\.transit).min()!
            if spread <= .milliseconds(100) { unexplained.append(window.last!.arrived - window.first!.arrived) }
        }
        #expect(unexplained.isEmpty, "\(unexplained.count) seconds at the far end held \(rate + 1) requests with transit times within 100 ms of each other")
    }
}
