/// Bytes that are not JSON, with where the reader stopped.
struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    var offset: Int
    var problem: String
    var description: String { "not JSON at byte \(offset): \(problem)" }
}
