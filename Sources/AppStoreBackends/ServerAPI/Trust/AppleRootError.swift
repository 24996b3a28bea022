/// Why the pinned Apple root could not be loaded (a damaged or tampered binary).
public enum AppleRootError: Error, Sendable, Equatable, CustomStringConvertible {
    case notBase64
    case fingerprintMismatch(found: String)
    case notACertificate(String)

    public var description: String {
        switch self {
        case .notBase64: "the pinned Apple Root CA - G3 is not base64: this build is damaged; reinstall the package"
        case .fingerprintMismatch(let found): "the pinned Apple Root CA - G3 has SHA-256 \(found), not Apple's published \(AppleRootCertificate.g3Fingerprint): this build is damaged or altered; reinstall the package"
        case .notACertificate(let why): "the pinned Apple Root CA - G3 matches its fingerprint but does not parse (\(why)): reinstall the package"
        }
    }
}
