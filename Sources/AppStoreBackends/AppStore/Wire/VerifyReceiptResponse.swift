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
    /// `latest_expired_receipt_info`: only iOS 6-style answers (21006) carry it.
    public var hasLatestExpiredReceiptInfo = false

    /// The `receipt` object; the poller only needs the bundle identifier.
    public struct Receipt: Sendable, Equatable {
        /// `bundle_id`: identifies the app the receipt belongs to.
        public var bundleID: String?
        /// `bid` without `bundle_id`: an iOS 6-style transaction receipt, not an app receipt.
        public var isTransactionReceipt: Bool

        public init(bundleID: String?, isTransactionReceipt: Bool = false) {
            self.bundleID = bundleID
            self.isTransactionReceipt = isTransactionReceipt
        }

        init(_ o: WireObject) throws {
            bundleID = try o.string("bundle_id")
            isTransactionReceipt = bundleID == nil && o.object["bid"] != nil
        }
    }

    /// An answer for an iOS 6-style transaction receipt (`receipt.bid`, or 21006's
    /// `latest_expired_receipt_info`): its shape carries no renewal info and no app bundle, so it
    /// is refused with its own reason instead of being half-decided.
    public var isForTransactionReceipt: Bool {
        receipt?.isTransactionReceipt == true || hasLatestExpiredReceiptInfo
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
        hasLatestExpiredReceiptInfo = o.object["latest_expired_receipt_info"].map { $0 != .null } ?? false
    }
}
