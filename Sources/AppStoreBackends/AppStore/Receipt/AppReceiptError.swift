/// Why an app receipt could not be read. Each message says what is wrong and what to do, and none
/// quotes the receipt: its bytes are a customer's purchase history.
public enum AppReceiptError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text is longer than ``AppReceipt/maximumBase64Length``: no app receipt is that large.
    case tooLarge(characters: Int)
    /// The text is empty.
    case empty
    /// The text is not standard base64.
    case notBase64
    /// The bytes are not a PKCS#7 SignedData ContentInfo; `reason` says which part is missing.
    case notPKCS7(reason: String)
    /// The container holds no encapsulated data: there is no receipt inside it.
    case noReceiptPayload
    /// The payload is not a SET of receipt attributes.
    case malformedPayload(reason: String)
    /// An in-app purchase receipt (attribute 17) is not as Apple writes it; `type` names the
    /// in-app attribute at fault (1703 transaction_id, …) when there is one.
    case malformedInAppAttribute(type: Int?, reason: String)

    public var description: String {
        switch self {
        case .tooLarge(let characters):
            return "The app receipt is \(characters) characters long, more than the \(AppReceipt.maximumBase64Length) accepted: it is not an app receipt. Check what the app uploaded."
        case .empty:
            return "The app receipt is empty. Ask the app to upload its receipt again (after a receipt refresh)."
        case .notBase64:
            return "The app receipt is not base64. Send the receipt file's bytes base64-encoded, as the app reads them from appStoreReceiptURL."
        case .notPKCS7(let reason):
            return "The app receipt is not a PKCS#7 container (\(reason)). It may be truncated or not an App Store receipt; ask the app to upload it again."
        case .noReceiptPayload:
            return "The app receipt's PKCS#7 container holds no receipt payload. Ask the app to refresh its receipt and upload it again."
        case .malformedPayload(let reason):
            return "The app receipt's payload is malformed (\(reason)). Ask the app to upload it again; if it persists, the receipt was not written by the App Store."
        case .malformedInAppAttribute(let type, let reason):
            let field = type.map { "attribute \($0)" } ?? "an in-app purchase receipt"
            return "Malformed in-app attribute: \(field) \(reason). The receipt was not written the way the App Store writes it; read this subscription's ids from the App Store Server API instead."
        }
    }
}
