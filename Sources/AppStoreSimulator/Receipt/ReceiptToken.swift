import Foundation

/// Which subscriber, environment and version a simulated receipt is: its identity. The receipt
/// itself is shaped like Apple's (``SimulatedReceipt``) and carries this token's text in a private
/// attribute, so a request finds its subscriber without a lookup table.
public struct ReceiptToken: Sendable, Equatable {
    public var environment: String
    public var subscriberIndex: Int
    public var version: Int

    static let prefix = "simulated-app-store-receipt"

    /// The text carried in the receipt: `simulated-app-store-receipt|env|index|version`.
    var text: String { "\(Self.prefix)|\(environment)|\(subscriberIndex)|\(version)" }

    /// A receipt with this identity and no purchases (a subscriber's real receipt lists them:
    /// `SimulatedSubscriber.receipt(at:)`).
    public var encoded: String {
        SimulatedReceipt(token: self, bundleID: nil, purchases: []).encoded
    }

    /// Reads the token of a receipt; nil when the text is not base64 or not a receipt of this simulator.
    public init?(encoded: String) {
        guard let data = Data(base64Encoded: encoded), let text = SimulatedReceipt.tokenText(in: [UInt8](data)) else { return nil }
        let parts = text.split(separator: "|", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == Self.prefix, let index = Int(parts[2]), let version = Int(parts[3]) else { return nil }
        self.init(environment: String(parts[1]), subscriberIndex: index, version: version)
    }

    public init(environment: String, subscriberIndex: Int, version: Int) {
        self.environment = environment
        self.subscriberIndex = subscriberIndex
        self.version = version
    }
}
