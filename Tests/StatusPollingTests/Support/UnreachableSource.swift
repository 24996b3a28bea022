import EntitlementCore
import Logging
import StatusPolling

/// A status source for jobs that must end before asking anything (the worker lock held): any
/// question is a test failure.
struct UnreachableSource: SubscriptionStatusSource {
    struct Asked: Error {}

    func status(of row: SubscriptionRow, logger: Logger) async throws -> StatusLookup {
        throw Asked()
    }
}
