/// The body verifyReceipt answers with. Only `status` is always present; everything else is
/// optional, unknown keys are ignored, and a missing array reads as empty.
public struct VerifyReceiptResponse: Sendable, Equatable {
    /// `status`: 0 valid, otherwise one of Apple's 21xxx codes.
    public var status: VerifyReceiptStatus
    /// `environment`: "Production" or "Sandbox".
    public var environment: String?
    /// `is-retryable` or `is_retryable` (Apple has used both), as a boolean or 0/1.
    public var isRetryable: Bool?
    /// `receipt`: the decoded receipt that was sent.
    public var receipt: Receipt?
    /// `latest_receipt`: base64 of the newest receipt, to replay next time.
    public var latestReceipt: String?
    /// `latest_receipt_info`: accepted as an array or, as Apple has sent it, a single object.
    public var latestReceiptInfo: [LatestReceiptInfo]
    /// `pending_renewal_info`
    public var pendingRenewalInfo: [PendingRenewalInfo]

    /// The `receipt` object; the poller only needs the bundle identifier.
    public struct Receipt: Sendable, Equatable {
        /// `bundle_id`: identifies the app the receipt belongs to.
        public var bundleID: String?

        public init(bundleID: String?) { self.bundleID = bundleID }

        init(_ o: WireObject) throws {
            bundleID = try o.string("bundle_id")
        }
    }

    public init(
        status: VerifyReceiptStatus, environment: String? = nil, isRetryable: Bool? = nil,
        receipt: Receipt? = nil, latestReceipt: String? = nil, latestReceiptInfo: [LatestReceiptInfo] = [],
        pendingRenewalInfo: [PendingRenewalInfo] = []
    ) {
        self.status = status
        self.environment = environment
        self.isRetryable = isRetryable
        self.receipt = receipt
        self.latestReceipt = latestReceipt
        self.latestReceiptInfo = latestReceiptInfo
        self.pendingRenewalInfo = pendingRenewalInfo
    }

    /// Reads an answer's bytes. Throws ``JSONSyntaxError`` when they are not JSON (an outage page,
    /// a truncated body) and ``WireFormatError`` when the JSON is not verifyReceipt's shape.
    public init<Bytes: Collection>(json bytes: Bytes) throws where Bytes.Element == UInt8 {
        let o = try WireObject(document: JSONValue.parse(bytes))
        guard let code = try o.int64("status") else { throw WireFormatError(path: "status", problem: "no status in the answer") }
        guard let status = Int(exactly: code) else { throw WireFormatError(path: "status", problem: "out of range") }
        self.status = VerifyReceiptStatus(rawValue: status)
        environment = try o.string("environment")
        isRetryable = try o.bool("is-retryable") ?? o.bool("is_retryable")
        receipt = try o.object("receipt").map(Receipt.init)
        latestReceipt = try o.string("latest_receipt")
        latestReceiptInfo = try o.objects("latest_receipt_info").map(LatestReceiptInfo.init)
        pendingRenewalInfo = try o.objects("pending_renewal_info").map(PendingRenewalInfo.init)
    }
}
