import Foundation
import X509

/// Reads a root certificate the operator trusts besides Apple's (`--trusted-root-file`): PEM or
/// DER. Only for a Server API stand-in on loopback, such as the simulator; the CLI refuses it for
/// any other URL.
public enum TrustedRootFile {
    public static func load(_ path: String) throws(TrustedRootFileError) -> Certificate {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path) }
        let text = String(decoding: data, as: UTF8.self)
        if text.contains("-----BEGIN CERTIFICATE-----") {
            guard let certificate = try? Certificate(pemEncoded: text) else { throw .notACertificate(path) }
            return certificate
        }
        guard let certificate = try? Certificate(derEncoded: Array(data)) else { throw .notACertificate(path) }
        return certificate
    }
}

/// Why a trusted root file could not be used.
public enum TrustedRootFileError: Error, Sendable, Equatable, CustomStringConvertible {
    case unreadable(String)
    case notACertificate(String)

    public var description: String {
        switch self {
        case .unreadable(let path): "cannot read the trusted root file \(path); check the path and its permissions"
        case .notACertificate(let path): "\(path) is not an X.509 certificate in PEM or DER"
        }
    }
}
