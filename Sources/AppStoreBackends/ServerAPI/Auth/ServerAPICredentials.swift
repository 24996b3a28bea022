/// Who the poller is to the App Store Server API: the key and its ids from App Store Connect, and
/// the app the token is for (`bid`).
public struct ServerAPICredentials: Sendable {
    /// The issuer id shown above the keys in App Store Connect (a UUID).
    public var issuerID: String
    /// The key id (10 characters) of the In-App Purchase key.
    public var keyID: String
    public var key: InAppPurchaseKey
    /// The app's bundle id, sent as `bid`.
    public var bundleID: String

    public init(issuerID: String, keyID: String, key: InAppPurchaseKey, bundleID: String) {
        self.issuerID = issuerID
        self.keyID = keyID
        self.key = key
        self.bundleID = bundleID
    }
}
