import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// A verifyReceipt stand-in for benchmarks: every receipt gets a valid answer of one fixed shape
/// after a fixed latency, over HTTP/1.1 keep-alive, with as little work per request as possible
/// so that the poller under test, not the stand-in, is what is measured.
///
/// Each receipt maps to its own `original_transaction_id` (a hash of the receipt), so many rows
/// can be verified without conflicts; the answer expires 25 days after the stand-in's wall clock,
/// as an active monthly subscription would. It holds no population, no faults and no truth: use
/// the full simulator for correctness.
///
/// It also answers the App Store Server API's two endpoints (see `LeanStandIn+ServerAPI.swift`):
/// one active transaction per id, signed once and then served from a cache; `POST
/// /simulator/arrivals` answers how many arrived and the most in any one second.
public struct LeanStandIn: Sendable {
    public var bundleID: String
    public var sharedSecret: String
    public var latency: Duration
    /// The app's Apple id in production Server API answers.
    public var appAppleID: Int64
    /// Signs the Server API's answers; trust its root.
    public let pki: SimulatorPKI
    /// The key bearer tokens must be signed with.
    public let serverAPIKey: SimulatedInAppPurchaseKey
    let cache = LeanAnswerCache()
    /// When the Server API's requests arrived: `POST /simulator/arrivals` reads the busiest second.
    let serverAPIArrivals = ArrivalWindow()

    public init(bundleID: String, sharedSecret: String, latency: Duration, appAppleID: Int64 = 1_234_567_890) {
        self.bundleID = bundleID
        self.sharedSecret = sharedSecret
        self.latency = latency
        self.appAppleID = appAppleID
        serverAPIKey = SimulatedInAppPurchaseKey()
        pki = SimulatorPKI.forSimulator(startMs: Int64(Date().timeIntervalSince1970 * 1000))
    }

    /// Serves until SIGINT or SIGTERM. `onReady` gets the endpoints once bound.
    public func runUntilSignalled(host: String, port: Int, logger: Logger, onReady: @escaping @Sendable (SimulatorServer.Endpoints) -> Void) async throws {
        let router = Router()
        let standIn = self
        router.post("verifyReceipt") { request, _ in try await standIn.respond(request, environment: "Production") }
        router.post("sandbox/verifyReceipt") { request, _ in try await standIn.respond(request, environment: "Sandbox") }
        standIn.addServerAPIRoutes(router)
        var quiet = logger
        quiet.logLevel = .warning
        try await SimulatorServer.runUntilSignalled(router: router, host: host, port: port, logger: quiet, onReady: onReady)
    }

    func respond(_ request: Request, environment: String) async throws -> Response {
        let body = try await request.body.collect(upTo: 4 << 20)
        let answer = self.answer(to: body, environment: environment, nowMs: Int64(Date().timeIntervalSince1970 * 1000))
        if latency > .zero { try await Task.sleep(for: latency) }
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: answer))
    }

    /// The answer to one request body: 21002 when there is no `receipt-data`, 21004 for a wrong
    /// shared secret, else status 0 with one transaction and its renewal info.
    func answer(to body: ByteBuffer, environment: String, nowMs: Int64) -> ByteBuffer {
        let bytes = body.readableBytesView
        guard let receipt = Self.stringValue(of: "receipt-data", in: bytes), !receipt.isEmpty else {
            return ByteBuffer(string: #"{"status":21002,"environment":"\#(environment)"}"#)
        }
        guard Self.stringValue(of: "password", in: bytes).map({ String(decoding: $0, as: UTF8.self) }) == sharedSecret else {
            return ByteBuffer(string: #"{"status":21004,"environment":"\#(environment)"}"#)
        }
        let otid = 100_000_000_000_000 + Self.fnv1a(receipt) % 900_000_000_000_000
        let purchase = nowMs - 5 * 86_400_000
        let expires = nowMs + 25 * 86_400_000
        let product = "com.example.premium.monthly"
        var out = ByteBuffer()
        out.reserveCapacity(receipt.count + 1600)
        out.writeString(#"{"status":0,"environment":"\#(environment)","receipt":{"receipt_type":"Production","bundle_id":"\#(bundleID)","application_version":"1","receipt_creation_date_ms":"\#(nowMs)","request_date_ms":"\#(nowMs)","original_application_version":"1.0","in_app":[]},"#)
        out.writeString(#""latest_receipt_info":[{"quantity":"1","product_id":"\#(product)","transaction_id":"\#(otid + 1)","original_transaction_id":"\#(otid)","web_order_line_item_id":"9\#(otid)","#)
        out.writeString(#""purchase_date":"\#(purchase / 1000) Etc/GMT","purchase_date_ms":"\#(purchase)","purchase_date_pst":"\#(purchase / 1000) America/Los_Angeles","#)
        out.writeString(#""original_purchase_date":"\#(purchase / 1000) Etc/GMT","original_purchase_date_ms":"\#(purchase)","original_purchase_date_pst":"\#(purchase / 1000) America/Los_Angeles","#)
        out.writeString(#""expires_date":"\#(expires / 1000) Etc/GMT","expires_date_ms":"\#(expires)","expires_date_pst":"\#(expires / 1000) America/Los_Angeles","#)
        out.writeString(#""is_trial_period":"false","is_in_intro_offer_period":"false","in_app_ownership_type":"PURCHASED","subscription_group_identifier":"20000001"}],"#)
        out.writeString(#""pending_renewal_info":[{"auto_renew_product_id":"\#(product)","product_id":"\#(product)","original_transaction_id":"\#(otid)","auto_renew_status":"1"}],"#)
        out.writeString(#""latest_receipt":""#)
        out.writeBytes(receipt)
        out.writeString(#""}"#)
        return out
    }

    /// The bytes of the JSON string value of `key` at the top level of a small object, found by a
    /// scan rather than a parse: base64 and secrets carry no escapes worth decoding here.
    static func stringValue(of key: String, in bytes: ByteBufferView) -> ByteBufferView? {
        let needle = Array("\"\(key)\"".utf8)
        var index = bytes.startIndex
        while let found = bytes[index...].firstIndex(of: needle[0]) {
            let end = found + needle.count
            guard end <= bytes.endIndex else { return nil }
            if bytes[found..<end].elementsEqual(needle) {
                var cursor = end
                while cursor < bytes.endIndex, [UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: "\t"), UInt8(ascii: "\n")].contains(bytes[cursor]) {
                    cursor += 1
                }
                guard cursor < bytes.endIndex, bytes[cursor] == UInt8(ascii: "\"") else { return nil }
                let start = cursor + 1
                guard let close = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                return bytes[start..<close]
            }
            index = found + 1
        }
        return nil
    }

    /// FNV-1a, 64 bits: a stable id per receipt.
    static func fnv1a(_ bytes: ByteBufferView) -> Int64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01B3
        }
        return Int64(bitPattern: hash >> 1)
    }
}
