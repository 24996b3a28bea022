/// A backend's announcement that Apple is retiring it (verifyReceipt's RFC 8594 `Deprecation` and
/// `Sunset` headers), logged once per run so operators see it before the day comes.
public struct DeprecationNotice: Sendable, Equatable {
    public var backend: StatusBackend
    /// The headers as sent, e.g. "Deprecation: true, Sunset: Sat, 01 Jan 2028 00:00:00 GMT".
    public var headers: String

    public init(backend: StatusBackend, headers: String) {
        self.backend = backend
        self.headers = headers
    }
}
