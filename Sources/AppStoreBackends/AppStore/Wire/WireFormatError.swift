/// JSON that is not of the shape Apple documents: a value of the wrong type, or no `status`.
struct WireFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key path, e.g. `latest_receipt_info.0.expires_date_ms`.
    var path: String
    var problem: String
    var description: String { path.isEmpty ? problem : "\(path): \(problem)" }
}
