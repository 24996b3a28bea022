import Crypto
import Foundation

extension SimulatorPKI {
    /// `payload` as a compact JWS the way the App Store signs: header `{"alg":"ES256","x5c":[…]}`,
    /// payload base64url, and the raw 64-byte r‖s ES256 signature over `header.payload`.
    func sign(_ payload: [String: Any]) -> String {
        let json = (try? JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return sign(json: json)
    }

    /// Signs payload bytes as they are.
    func sign(json: Data) -> String {
        let signingInput = encodedHeader + "." + Base64URL.encode(json)
        // Signing with a valid key over bytes cannot fail; an empty signature would be rejected anyway.
        let signature = (try? leafKey.signature(for: Data(signingInput.utf8)).rawRepresentation) ?? Data()
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// `jws` with one byte of its payload changed and the original signature kept: what a
    /// tampering intermediary would send. The change keeps the payload valid JSON (it moves the
    /// first digit of `expiresDate`, or else of any number), so only the signature check catches it.
    static func tampered(_ jws: String) -> String {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, var payload = Base64URL.decode(parts[1]) else { return jws }
        let bytes = [UInt8](payload)
        let marker = Array(#""expiresDate":"#.utf8)
        var index = bytes.indices.first { bytes[$0...].starts(with: marker) }.map { $0 + marker.count }
        if index == nil { index = bytes.firstIndex { (0x30...0x39).contains($0) } }
        guard let at = index, at < bytes.count, (0x30...0x39).contains(bytes[at]) else { return jws }
        payload[payload.startIndex + at] = bytes[at] == 0x39 ? 0x31 : bytes[at] + 1
        return "\(parts[0]).\(Base64URL.encode(payload)).\(parts[2])"
    }
}
