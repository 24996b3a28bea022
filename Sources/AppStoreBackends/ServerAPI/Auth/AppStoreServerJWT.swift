import Crypto
import Foundation

/// The bearer token of the App Store Server API: an ES256 JWT (header `alg`, `kid`, `typ`; claims
/// `iss`, `iat`, `exp`, `aud` = appstoreconnect-v1, `bid`), signed with the In-App Purchase key.
/// `iat` is sent, as Apple's documentation asks. The signature is JOSE's raw 64-byte r‖s, not DER.
public enum AppStoreServerJWT {
    /// Apple refuses tokens that live longer than an hour.
    public static let maxLifetime: Duration = .seconds(3600)
    public static let audience = "appstoreconnect-v1"

    struct Header: Encodable {
        var alg = "ES256"
        var kid: String
        var typ = "JWT"
    }

    struct Claims: Encodable {
        var iss: String
        var iat: Int64
        var exp: Int64
        var aud = AppStoreServerJWT.audience
        var bid: String
    }

    /// A token issued at `issuedAt`, valid for `lifetime` (at most an hour).
    public static func make(_ credentials: ServerAPICredentials, issuedAt: Date, lifetime: Duration) throws(BearerTokenError) -> String {
        let iat = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
        let seconds = min(lifetime, maxLifetime).components.seconds
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header: Data, claims: Data
        do {
            header = try encoder.encode(Header(kid: credentials.keyID))
            claims = try encoder.encode(Claims(iss: credentials.issuerID, iat: iat, exp: iat + seconds, bid: credentials.bundleID))
        } catch {
            throw .encoding("\(error)")
        }
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        do {
            let signature = try credentials.key.signingKey.signature(for: Data(signingInput.utf8))
            return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
        } catch {
            throw .signing("\(error)")
        }
    }
}
