import Foundation

/// What the simulator's receipts hold: which subscriber, which environment, which version. A real
/// receipt is a signed PKCS#7 blob; these are base64 too, so the client sends them unchanged.
public struct ReceiptToken: Sendable, Equatable {
    public var environment: String
    public var subscriberIndex: Int
    public var version: Int

    static let prefix = "simulated-app-store-receipt"

    public var encoded: String {
        Data("\(Self.prefix)|\(environment)|\(subscriberIndex)|\(version)".utf8).base64EncodedString()
    }

    /// Reads a token; nil when the text is not base64 or not a receipt of this simulator.
    public init?(encoded: String) {
        guard let data = Data(base64Encoded: encoded) else { return nil }
        let parts = String(decoding: data, as: UTF8.self).split(separator: "|")
        guard parts.count == 4, parts[0] == Self.prefix, let index = Int(parts[2]), let version = Int(parts[3]) else { return nil }
        self.init(environment: String(parts[1]), subscriberIndex: index, version: version)
    }

    public init(environment: String, subscriberIndex: Int, version: Int) {
        self.environment = environment
        self.subscriberIndex = subscriberIndex
        self.version = version
    }
}
