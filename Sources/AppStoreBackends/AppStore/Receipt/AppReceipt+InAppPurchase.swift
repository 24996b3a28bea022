import EntitlementCore

extension AppReceipt {
    /// One in-app purchase receipt (payload attribute 17): a transaction of the app's products.
    public struct InAppPurchase: Sendable, Equatable {
        /// Attribute 1702, `product_id`.
        public var productID: String
        /// Attribute 1703, `transaction_id`.
        public var transactionID: String
        /// Attribute 1705, `original_transaction_id`: the subscription's id for the App Store Server API.
        public var originalTransactionID: String
        /// Attribute 1704, `purchase_date`, in Unix milliseconds.
        public var purchaseDateMs: Int64?
        /// Attribute 1708, `expires_date`, in Unix milliseconds; nil for what does not expire.
        public var expiresDateMs: Int64?

        public init(productID: String, transactionID: String, originalTransactionID: String, purchaseDateMs: Int64? = nil, expiresDateMs: Int64? = nil) {
            self.productID = productID
            self.transactionID = transactionID
            self.originalTransactionID = originalTransactionID
            self.purchaseDateMs = purchaseDateMs
            self.expiresDateMs = expiresDateMs
        }

        /// Reads the value of a type-17 attribute: a SET of attributes 1701…1711. Unknown types
        /// are skipped (Apple adds some); a known one of the wrong shape is an error, not a nil.
        init(attributeValue: [UInt8]) throws(AppReceiptError) {
            let fields: [ReceiptAttribute]
            do {
                fields = try ReceiptAttribute.set(attributeValue)
            } catch {
                throw .malformedInAppAttribute(type: nil, reason: "is \(error.reason)")
            }
            var productID: String?, transactionID: String?, originalTransactionID: String?
            var purchaseDateMs: Int64?, expiresDateMs: Int64?
            for field in fields {
                switch field.type {
                case 1701, 1711:
                    guard field.integer != nil else { throw .malformedInAppAttribute(type: field.type, reason: "is not an INTEGER") }
                case 1702: productID = try Self.utf8(field)
                case 1703: transactionID = try Self.utf8(field)
                case 1705: originalTransactionID = try Self.utf8(field)
                case 1704: purchaseDateMs = try Self.date(field)
                case 1708: expiresDateMs = try Self.date(field)
                default: continue
                }
            }
            guard let productID, !productID.isEmpty else { throw .malformedInAppAttribute(type: 1702, reason: "(product_id) is missing") }
            guard let transactionID, !transactionID.isEmpty else { throw .malformedInAppAttribute(type: 1703, reason: "(transaction_id) is missing") }
            guard let originalTransactionID, !originalTransactionID.isEmpty else {
                throw .malformedInAppAttribute(type: 1705, reason: "(original_transaction_id) is missing")
            }
            self.init(productID: productID, transactionID: transactionID, originalTransactionID: originalTransactionID,
                      purchaseDateMs: purchaseDateMs, expiresDateMs: expiresDateMs)
        }

        private static func utf8(_ field: ReceiptAttribute) throws(AppReceiptError) -> String {
            guard let text = field.utf8String else { throw .malformedInAppAttribute(type: field.type, reason: "is not a UTF8String") }
            return text
        }

        /// An RFC 3339 IA5String; empty means no date (Apple writes "" for what never expires).
        private static func date(_ field: ReceiptAttribute) throws(AppReceiptError) -> Int64? {
            guard let text = field.ia5String else { throw .malformedInAppAttribute(type: field.type, reason: "is not an IA5String") }
            if text.isEmpty { return nil }
            guard let ms = RFC3339Timestamp.milliseconds(text) else {
                throw .malformedInAppAttribute(type: field.type, reason: "is not an RFC 3339 date")
            }
            return ms
        }
    }
}
