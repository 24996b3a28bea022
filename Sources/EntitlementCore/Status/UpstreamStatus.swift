/// A status code as one backend answered it: verifyReceipt's `status` (0, 21003, …) or an App
/// Store Server API code. The backend is part of the value, because the same number can mean
/// different things to two backends.
public struct UpstreamStatus: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var backend: StatusBackend
    public var code: Int

    public init(backend: StatusBackend, code: Int) {
        self.backend = backend
        self.code = code
    }

    /// "verifyReceipt 21003": how reports and logs name it.
    public var description: String { "\(backend.rawValue) \(code)" }

    public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.backend.rawValue, lhs.code) < (rhs.backend.rawValue, rhs.code) }
}
