/// The run history as a job keeps it: one record per run, written when it starts and when it ends,
/// so `runs` shows every run (killed ones as still running) and a backfill resumes from its
/// checkpoint. Reading the history back is the report's (``SubscriptionTrail/runs(last:)``).
public protocol RunJournal: Sendable {
    /// Opens a run in the run history and returns its id.
    func startRun(_ start: RunStart) async throws -> Int64

    /// Opens a backfill: a run whose target rows are fixed now, so `--resume` finishes that set.
    func startBackfill(_ start: RunStart, targets: BackfillTargets) async throws -> (runID: Int64, targets: Int)

    /// The backfill to resume: the latest one that did not finish (interrupted, killed, or aborted
    /// by the circuit breaker or a credential rejection), with its checkpoint.
    func resumableBackfill() async throws -> RunRecord?

    /// Resumes `backfill` under this process; returns the run id the process records its work
    /// under: the backfill's own (SQLite: the run is marked running again), or a new run of the
    /// same backfill (a store shared by several workers, each with its run in the history).
    func resumeBackfill(_ backfill: RunRecord, start: RunStart) async throws -> Int64

    /// Closes a run with its report, status and exit code.
    func finishRun(_ runID: Int64, report: RunReport, status: RunStatus, checkpoint: Int64?) async throws

    /// When the last run of `mode` that verified every selected row ended (wall clock, ms).
    func lastSuccessfulRunFinishedAt(mode: RunMode) async throws -> Int64?
}
