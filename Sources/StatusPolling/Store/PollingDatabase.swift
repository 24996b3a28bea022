/// A database the poller can use, before it is opened: what `--database` names. The executable's
/// composition point is the only place that picks the implementation (a SQLite path, or a
/// PostgreSQL URL).
///
/// A new store implements this and ``PollingStore``; the job, the commands and the demo need
/// nothing else.
public protocol PollingDatabase: Sendable {
    /// How messages name it: a path, or a URL without its password.
    var name: String { get }

    /// Creates or upgrades the schema (idempotent); returns the migrations it applied.
    func migrate() async throws -> [String]

    /// Opens the migrated database. Throws ``StoreError`` when it is missing, unmigrated, too new,
    /// unreadable or locked.
    func open() async throws -> any PollingStore

    /// Takes the overlap lock that keeps two runs off the same work; throws ``RunLock/Failure``
    /// (`.held` names the holder) when it cannot.
    func acquireRunLock(holder: RunLock.Holder) async throws -> any RunLease
}
