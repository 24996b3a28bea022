/// The App Store shared secret. Its description is redacted so that it cannot reach a log line,
/// a report or an error message by accident.
public struct SharedSecret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself; read it only to build the request body.
    public let value: String
    public init(_ value: String) { self.value = value }
    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
}
