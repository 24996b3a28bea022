import Foundation

/// An app receipt read on our side for what the App Store Server API needs first: the
/// subscription's original transaction ids, which rows enrolled with only a receipt lack.
///
/// The PKCS#7 signature is deliberately NOT verified: nothing read here is trusted as a status.
/// The ids only say which transactions to ask the Server API about, and its signed answers are
/// what the poller trusts; a forged receipt can at worst name ids that Apple then denies.
/// Receipt bytes are never logged, nor quoted in errors.
public struct AppReceipt: Sendable, Equatable {
    /// The longest base64 text accepted (4 MiB): real receipts are kilobytes, and the cap keeps a
    /// garbage upload from costing memory and time.
    public static let maximumBase64Length = 4 << 20

    /// Attribute 2, the app's bundle identifier.
    public var bundleID: String?
    /// Attribute 17, one per transaction, in the receipt's order.
    public var inAppPurchases: [InAppPurchase]

    /// The distinct original transaction ids, in order of first appearance: one per subscription
    /// (chain) the receipt knows of.
    public var originalTransactionIDs: [String] {
        var seen = Set<String>()
        return inAppPurchases.map(\.originalTransactionID).filter { seen.insert($0).inserted }
    }

    public init(bundleID: String?, inAppPurchases: [InAppPurchase]) {
        self.bundleID = bundleID
        self.inAppPurchases = inAppPurchases
    }

    /// Reads a receipt as the app uploads it: base64 (line breaks tolerated) of the receipt file.
    public init(base64: String) throws(AppReceiptError) {
        let length = base64.utf8.count
        guard length <= Self.maximumBase64Length else { throw .tooLarge(characters: length) }
        var text = base64
        if text.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0x20 || $0 == 0x09 }) {
            text = String(text.filter { !$0.isWhitespace })
        }
        guard !text.isEmpty else { throw .empty }
        guard let data = Data(base64Encoded: text) else { throw .notBase64 }
        try self.init(bytes: [UInt8](data))
    }

    /// Reads a receipt file's bytes: the PKCS#7 container, then its payload's attributes.
    public init(bytes: [UInt8]) throws(AppReceiptError) {
        guard !bytes.isEmpty else { throw .empty }
        let payload = try PKCS7Envelope.payload(of: bytes)
        let attributes: [ReceiptAttribute]
        do {
            attributes = try ReceiptAttribute.set(payload)
        } catch {
            throw .malformedPayload(reason: error.reason)
        }
        var bundleID: String?
        var purchases: [InAppPurchase] = []
        for attribute in attributes {
            switch attribute.type {
            case 2:
                guard let text = attribute.utf8String else { throw .malformedPayload(reason: "attribute 2 (bundle_id) is not a UTF8String") }
                bundleID = text
            case 17:
                purchases.append(try InAppPurchase(attributeValue: attribute.value))
            default:
                continue
            }
        }
        self.init(bundleID: bundleID, inAppPurchases: purchases)
    }
}
