import Foundation
import X509

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The files of `Fixtures/apple-conformance/` (their sources and licence in its LICENSE.txt), and the
/// verifier configured as Apple's own tests configure theirs: testCA.der the only trusted root,
/// bundle `com.example`, appAppleId 1234.
enum AppleConformance {
    static let bundleID = "com.example"
    static let appAppleID: Int64 = 1234

    /// The bytes of `path`, relative to `Fixtures/apple-conformance/`.
    static func data(_ path: String) throws -> Data {
        let url = URL(fileURLWithPath: path)
        let folder = ["Fixtures/apple-conformance", url.deletingLastPathComponent().relativePath].filter { $0 != "." }.joined(separator: "/")
        guard let found = Bundle.module.url(forResource: url.lastPathComponent, withExtension: nil, subdirectory: folder) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        return try Data(contentsOf: found)
    }

    static func text(_ path: String) throws -> String {
        String(decoding: try data(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A certificate of `certs/`, PEM or DER.
    static func certificate(_ name: String) throws -> Certificate {
        let bytes = try data("certs/\(name)")
        return name.hasSuffix(".der") ? try Certificate(derEncoded: Array(bytes)) : try Certificate(pemEncoded: String(decoding: bytes, as: UTF8.self))
    }

    /// A certificate of `certs/` as `x5c` carries it: base64 DER.
    static func x5cEntry(_ name: String) throws -> String {
        let certificate = try certificate(name)
        return TestPKI.base64DER(certificate)
    }

    /// Apple's test root, testCA.der.
    static func testRoot() throws -> Certificate { try certificate("testCA.der") }

    static func verifier(roots: [Certificate]? = nil, bundleID: String = bundleID) throws -> SignedDataVerifier {
        SignedDataVerifier(trustedRoots: try roots ?? [testRoot()], bundleID: bundleID)
    }

    /// The `signedPayload` of a minted notification, read the way the receiver reads a body.
    static func signedPayload(_ name: String) throws -> String {
        guard case .version2(let signedPayload) = try NotificationBody(Array(try data("notifications/\(name).json"))) else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: name])
        }
        return signedPayload
    }

    /// Verifies a minted notification under testCA.der; its failure's check when refused.
    static func verify(_ name: String, roots: [Certificate]? = nil) async throws -> Result<SignedNotification, SignedDataFailure> {
        let signedPayload = try signedPayload(name)
        let verifier = try verifier(roots: roots)
        do {
            return .success(try await verifier.verifyNotification(signedPayload, appAppleID: appAppleID))
        } catch {
            return .failure(error)
        }
    }
}
