import Crypto
import Foundation

extension SimulatedInAppPurchaseKey {
    /// The audience of every App Store Server API token.
    static let audience = "appstoreconnect-v1"
    /// Apple refuses tokens that live longer than an hour after `iat`.
    static let longestLifetime: Double = 3600

    /// Whether `authorization` (the whole header value) is `Bearer <JWT>` with a JWT Apple would
    /// accept for `bundleID` at `now`: header alg ES256, kid = ``keyID``, typ JWT; claims iss =
    /// ``issuerID``, aud `appstoreconnect-v1`, bid = `bundleID`, exp after `now` and at most an
    /// hour after `iat` when `iat` is there (it is optional: Apple's Python client leaves it out);
    /// the raw r‖s ES256 signature made with this key.
    public func accepts(authorization: String?, bundleID: String, now: Date) -> Bool {
        guard let authorization, authorization.hasPrefix("Bearer ") else { return false }
        let token = authorization.dropFirst("Bearer ".count).trimmingCharacters(in: .whitespaces)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Base64URL.decode(parts[0]), let claimsData = Base64URL.decode(parts[1]),
            let signatureData = Base64URL.decode(parts[2]),
            let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: claimsData)) as? [String: Any]
        else { return false }
        guard header["alg"] as? String == "ES256", header["kid"] as? String == keyID, header["typ"] as? String == "JWT" else { return false }
        guard claims["iss"] as? String == issuerID, claims["aud"] as? String == Self.audience, claims["bid"] as? String == bundleID else { return false }
        guard let exp = Self.number(claims["exp"]), exp > now.timeIntervalSince1970 else { return false }
        if claims["iat"] != nil {
            guard let iat = Self.number(claims["iat"]), exp <= iat + Self.longestLifetime else { return false }
        }
        guard signatureData.count == 64, let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData) else { return false }
        return publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
    }

    /// A JSON number as seconds (JSONSerialization gives NSNumber, Int or Double by platform).
    static func number(_ value: Any?) -> Double? {
        (value as? NSNumber)?.doubleValue
    }
}
