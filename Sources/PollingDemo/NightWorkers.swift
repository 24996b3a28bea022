/// Plays a night's `run` outside the demo's process: `status-poller demo --workers N` starts N
/// worker processes of the binary against the demo's simulator and PostgreSQL database, so the
/// nights go through the leases, shared nights and worker locks that several hosts would use.
/// Without it, ``Demo`` runs the night's ``StatusPolling/PollJob`` in process.
public protocol NightWorkers: Sendable {
    /// Runs the night's workers to their end and returns what they did together.
    func play(_ night: NightRequest) async throws -> NightRun
}
