/// Where Apple is with a mass renewal-date extension (Get Status of Subscription Renewal Date
/// Extensions): counts once it is complete.
public struct MassExtensionStatus: Sendable, Equatable {
    public var requestIdentifier: String
    public var complete: Bool
    public var completeDateMs: Int64?
    public var succeeded: Int64?
    public var failed: Int64?

    public init(requestIdentifier: String, complete: Bool, completeDateMs: Int64? = nil, succeeded: Int64? = nil, failed: Int64? = nil) {
        self.requestIdentifier = requestIdentifier
        self.complete = complete
        self.completeDateMs = completeDateMs
        self.succeeded = succeeded
        self.failed = failed
    }
}
