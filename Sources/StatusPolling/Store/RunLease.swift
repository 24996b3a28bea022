/// A held overlap lock: released at the end of a run, and by the system when the process dies.
public protocol RunLease: Sendable {
    func release()
}
