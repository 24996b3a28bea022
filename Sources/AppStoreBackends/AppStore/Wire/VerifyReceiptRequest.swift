import EntitlementCore
import NIOCore

/// The JSON body POSTed to verifyReceipt. Written by hand rather than by an encoder: it is built
/// once per request, and its only long value, the base64 receipt, never needs escaping.
struct VerifyReceiptRequest: Sendable {
    /// `receipt-data`: the base64 app receipt.
    var receiptData: String
    /// `password`: the app's shared secret. Never logged.
    var password: String
    /// `exclude-old-transactions`: only the latest renewal of each subscription.
    var excludeOldTransactions: Bool

    /// The request body, as UTF-8 JSON: the receipt's bytes are copied once, straight into it.
    var body: ByteBuffer {
        let secret = JSONText.quoted(password)
        var buffer = ByteBuffer()
        buffer.reserveCapacity(receiptData.utf8.count + secret.utf8.count + 80)
        buffer.writeString(#"{"receipt-data":"#)
        if JSONText.needsEscaping(receiptData) {
            buffer.writeString(JSONText.quoted(receiptData))
        } else {
            buffer.writeInteger(UInt8(ascii: "\""))
            buffer.writeString(receiptData)
            buffer.writeInteger(UInt8(ascii: "\""))
        }
        buffer.writeString(#","password":"#)
        buffer.writeString(secret)
        buffer.writeString(excludeOldTransactions ? #","exclude-old-transactions":true}"# : #","exclude-old-transactions":false}"#)
        return buffer
    }
}
