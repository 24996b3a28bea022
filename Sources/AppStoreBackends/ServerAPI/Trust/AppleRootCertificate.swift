import Crypto
import Foundation
import X509

/// Apple Root CA - G3, the anchor of every JWS the App Store Server API signs, pinned in the
/// binary so that trust never depends on the machine's certificate store or on the certificate a
/// payload carries. Its DER is checked against Apple's published SHA-256 fingerprint.
public enum AppleRootCertificate {
    /// Apple's published SHA-256 fingerprint of Apple Root CA - G3 (apple.com/certificateauthority).
    public static let g3Fingerprint = "63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79"

    /// The certificate's DER, base64.
    static let g3Base64 = """
        MIICQzCCAcmgAwIBAgIILcX8iNLFS5UwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwSQXBwbGUgUm9vdCBDQSAtIEczMSYwJAYDVQQLDB1BcHBsZSBDZXJ0aWZpY2F0aW9u\
        IEF1dGhvcml0eTETMBEGA1UECgwKQXBwbGUgSW5jLjELMAkGA1UEBhMCVVMwHhcNMTQwNDMwMTgxOTA2WhcNMzkwNDMwMTgxOTA2WjBnMRswGQYDVQQDDBJBcHBsZSBS\
        b290IENBIC0gRzMxJjAkBgNVBAsMHUFwcGxlIENlcnRpZmljYXRpb24gQXV0aG9yaXR5MRMwEQYDVQQKDApBcHBsZSBJbmMuMQswCQYDVQQGEwJVUzB2MBAGByqGSM49\
        AgEGBSuBBAAiA2IABJjpLz1AcqTtkyJygRMc3RCV8cWjTnHcFBbZDuWmBSp3ZHtfTjjTuxxEtX/1H7YyYl3J6YRbTzBPEVoA/VhYDKX1DyxNB0cTddqXl5dvMVztK517\
        IDvYuVTZXpmkOlEKMaNCMEAwHQYDVR0OBBYEFLuw3qFYM4iapIqZ3r6966/ayySrMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMDA2gA\
        MGUCMQCD6cHEFl4aXTQY2e3v9GwOAEZLuN+yRhHFD/3meoyhpmvOwgPUnPWTxnS4at+qIxUCMG1mihDK1A3UT82NQz60imOlM27jbdoXt2QfyFMm+YhidDkLF1vLUagM\
        6BgD56KyKA==
        """

    /// Apple Root CA - G3, parsed and checked against its fingerprint; an error, never a crash, if
    /// the embedded bytes ever stop matching — a build that trusts another root must never verify.
    public static let g3: Result<Certificate, AppleRootError> = Result { () throws(AppleRootError) in
        try load(base64: g3Base64, fingerprint: g3Fingerprint)
    }

    /// The roots a verifier trusts unless given test roots: Apple Root CA - G3, or none when it
    /// could not be loaded (every payload is then refused as `untrusted_root`, saying why).
    public static var defaultRoots: [Certificate] { (try? g3.get()).map { [$0] } ?? [] }

    /// A pinned root from its DER in base64, refused unless its SHA-256 is `fingerprint`.
    static func load(base64: String, fingerprint expected: String) throws(AppleRootError) -> Certificate {
        guard let data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters), !data.isEmpty else { throw .notBase64 }
        let der = Array(data)
        let found = fingerprint(der)
        guard found == expected else { throw .fingerprintMismatch(found: found) }
        do {
            return try Certificate(derEncoded: der)
        } catch {
            throw .notACertificate("\(error)")
        }
    }

    /// "AB:CD:…": the SHA-256 of `der` the way certificate viewers print it.
    public static func fingerprint(_ der: [UInt8]) -> String {
        SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined(separator: ":")
    }
}
