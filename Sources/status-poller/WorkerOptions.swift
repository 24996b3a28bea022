import ArgumentParser
import Foundation
import PollerCommandLine
import StatusPolling

/// How a run takes part when several workers share one PostgreSQL database (ignored for SQLite,
/// where one run at a time polls a file).
struct WorkerOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "PostgreSQL: this worker's name (else worker_name in the config file, or STATUS_POLLER_WORKER_NAME; default: the host name). "
            + "One run per name at a time: a second run with the same name exits 75. Give each host or each process its own."))
    var workerName: String?

    @Option(help: ArgumentHelp(
        "PostgreSQL: how long a worker's lease on a batch of rows lasts (else lease_seconds, STATUS_POLLER_LEASE_SECONDS; default \(Composition.Worker.defaultLeaseSeconds)). "
            + "A worker that dies leaves its rows to the others once the lease expires; a live worker renews its leases, and starts a row only with half a lease left, "
            + "so it must exceed the longest verification of one row (request timeout × attempts)."))
    var leaseSeconds: Int?

    /// The worker's settings, with the documented defaults.
    func settings(_ settings: Settings) throws -> Composition.Worker {
        let named = settings.string(workerName, "worker_name")
        let name = named ?? ProcessInfo.processInfo.hostName
        guard !name.isEmpty, name.count <= 200 else { throw usageError("--worker-name must be 1 to 200 characters.") }
        let seconds = try settings.int(leaseSeconds, "lease_seconds", default: Composition.Worker.defaultLeaseSeconds)
        guard (10...86_400).contains(seconds) else { throw usageError("--lease-seconds must be between 10 and 86400, got \(seconds).") }
        return Composition.Worker(name: name, leaseDuration: .seconds(seconds), isNamed: named != nil)
    }
}
