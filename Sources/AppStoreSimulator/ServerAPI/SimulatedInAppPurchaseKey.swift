import Crypto
import Foundation

/// The In-App Purchase key the simulator expects, as App Store Connect issues one: a P-256 key
/// pair, a 10-character key id and the team's issuer id. A client signs its bearer tokens with
/// ``privateKeyPEM``; the simulator checks them with the public half.
public struct SimulatedInAppPurchaseKey: Sendable {
    /// The key id (`kid`), 10 characters like Apple's.
    public let keyID: String
    /// The issuer id (`iss`): a UUID, lowercase as App Store Connect shows it.
    public let issuerID: String
    /// Never mutated after creation; see ``SimulatorPKI``'s leaf key.
    nonisolated(unsafe) let privateKey: P256.Signing.PrivateKey
    nonisolated(unsafe) let publicKey: P256.Signing.PublicKey

    public init(keyID: String = "SIMKEY0001", issuerID: String = UUID().uuidString.lowercased()) {
        self.keyID = keyID
        self.issuerID = issuerID
        privateKey = P256.Signing.PrivateKey()
        publicKey = privateKey.publicKey
    }

    /// The private key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), the form of Apple's `.p8`
    /// download. A secret: write it to a 0600 file, never print or log it.
    public var privateKeyPEM: String { privateKey.pemRepresentation }

    /// The public key as PEM, for a client that wants to check its own tokens.
    public var publicKeyPEM: String { publicKey.pemRepresentation }
}
