/// What the simulated App Store remembers of Send Consumption Information: every answer it took
/// (202), in order, and the failures a test scripted for the next requests (a 503, a 429).
struct ConsumptionInbox: Sendable {
    var answers: [SimulatedConsumptionAnswer] = []
    /// HTTP statuses to answer the next requests with, first first, before any check of the body.
    var scripted: [Int] = []
}
