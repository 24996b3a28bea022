/// Why the demo could not play.
public enum DemoError: Error, Sendable, CustomStringConvertible {
    /// The database holds rows other than the demo's simulated subscribers; it is never replaced.
    case databaseHoldsOtherData(String)
    /// A night's job did not run (the lock held, the database unusable).
    case nightDidNotRun(Int, String)

    public var description: String {
        switch self {
        case .databaseHoldsOtherData(let name): return "\(name) exists and is not a demo database; pass another --database."
        case .nightDidNotRun(let night, let why): return "night \(night) did not run: \(why)"
        }
    }
}
