/// The body verifyReceipt answers with. Only `status` is always present; everything else is
/// optional, unknown keys are ignored, and a missing array reads as empty.
public struct VerifyReceiptResponse: Decodable, Sendable, Equatable {
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
    public struct Receipt: Decodable, Sendable, Equatable {
        /// `bundle_id`: identifies the app the receipt belongs to.
        public var bundleID: String?

        public init(bundleID: String?) { self.bundleID = bundleID }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: AnyCodingKey.self)
            bundleID = try c.decodeLenientString(forKey: .init("bundle_id"))
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

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        guard let code = try c.decodeLenientInt64(forKey: .init("status")) else {
            throw DecodingError.keyNotFound(
                AnyCodingKey("status"), .init(codingPath: [], debugDescription: "no status in the answer"))
        }
        status = VerifyReceiptStatus(rawValue: Int(code))
        environment = try c.decodeLenientString(forKey: .init("environment"))
        isRetryable = try c.decodeLenientBool(forKey: .init("is-retryable"))
            ?? c.decodeLenientBool(forKey: .init("is_retryable"))
        receipt = try c.decodeIfPresent(Receipt.self, forKey: .init("receipt"))
        latestReceipt = try c.decodeLenientString(forKey: .init("latest_receipt"))
        latestReceiptInfo = try c.decodeOneOrMany(LatestReceiptInfo.self, forKey: .init("latest_receipt_info"))
        pendingRenewalInfo = try c.decodeOneOrMany(PendingRenewalInfo.self, forKey: .init("pending_renewal_info"))
    }
}

extension KeyedDecodingContainer {
    /// An array, a single object standing for a one-element array, or nothing (empty).
    func decodeOneOrMany<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> [T] {
        guard contains(key), try !decodeNil(forKey: key) else { return [] }
        if (try? nestedUnkeyedContainer(forKey: key)) != nil { return try decode([T].self, forKey: key) }
        return [try decode(T.self, forKey: key)]
    }
}
