/// The name of a status backend, as reports and the run history show it. A struct, so a new
/// backend declares its own name without touching this file.
public struct StatusBackend: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}
