import AppStoreSimulator
import Testing

/// The stand-in's count of the busiest second, on given arrival times.
@Suite struct ArrivalWindowTests {
    @Test func theBusiestSecondIsCountedHalfOpen() {
        let window = ArrivalWindow()
        let start = ContinuousClock.now
        // Five arrivals 250 ms apart: any second holds four ([0, 1 s) excludes the one at 1 s).
        for index in 0..<5 { window.arrived(at: start + .milliseconds(index * 250)) }
        // Then three within 10 ms, 2 s later: with the one 999 ms before them, four again…
        window.arrived(at: start + .milliseconds(2_001))
        for index in 0..<3 { window.arrived(at: start + .milliseconds(3_000 + index * 5)) }
        #expect(window.take() == (total: 9, mostInOneSecond: 4))
        // …and counting starts afresh after a take.
        window.arrived(at: start + .seconds(10))
        #expect(window.take() == (total: 1, mostInOneSecond: 1))
    }
}
