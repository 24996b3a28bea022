import AppStoreSimulator
import Foundation
import Testing
@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// `AppReceipt` reads the ids the App Store Server API needs from an app receipt: the simulator's
/// Apple-shaped receipts, hand-built BER and DER receipts, and every malformed input, which must
/// be reported as the right error and never crash.
@Suite struct AppReceiptTests {
    typealias F = ReceiptFixture
    static let start: Int64 = 1_790_000_000_000
    static let day: Int64 = 86_400_000
    static let population = Population(PopulationConfiguration(subscribers: 400, seed: 11, startMs: start, horizonMs: start + 200 * day))

    /// What the receipt must list at `ms`: every visible transaction, chain by chain.
    static func expected(_ subscriber: SimulatedSubscriber, at ms: Int64) -> [AppReceipt.InAppPurchase] {
        subscriber.chains.flatMap { chain in
            chain.transactions.filter { $0.purchaseMs <= ms }.map {
                AppReceipt.InAppPurchase(productID: $0.productID, transactionID: $0.transactionID, originalTransactionID: chain.originalTransactionID,
                                         purchaseDateMs: $0.purchaseMs, expiresDateMs: $0.expiresMs)
            }
        }
    }

    static func subscriber(_ predicate: (SimulatedSubscriber) -> Bool) throws -> SimulatedSubscriber {
        let found = population.subscribers.first(where: predicate)
        return try #require(found)
    }

    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    static func error(_ base64: String) -> AppReceiptError? {
        do {
            _ = try AppReceipt(base64: base64)
            return nil
        } catch {
            return error
        }
    }

    // MARK: The simulator's receipts

    @Test(arguments: ["production, one chain", "production, two chains", "sandbox"])
    func simulatorReceiptsListTheVisibleTransactions(kind: String) throws {
        let subscriber = try Self.subscriber { s in
            switch kind {
            case "production, one chain": return s.environment == "Production" && s.chains.count == 1 && s.chains[0].transactions.count >= 4
            case "production, two chains": return s.environment == "Production" && s.chains.count == 2
            default: return s.environment == "Sandbox"
            }
        }
        for ms in [Self.start, Self.start + 45 * Self.day, Self.start + 199 * Self.day] {
            let text = subscriber.receipt(at: ms)
            let receipt = try AppReceipt(base64: text)
            let expected = Self.expected(subscriber, at: ms)
            #expect(!expected.isEmpty)
            #expect(receipt.bundleID == "com.example.premium")
            #expect(receipt.inAppPurchases == expected)
            #expect(receipt.inAppPurchases.map(\.transactionID) == expected.map(\.transactionID))
            #expect(receipt.inAppPurchases.map(\.expiresDateMs) == expected.map(\.expiresDateMs))
            let chainsSeen = subscriber.chains.filter { $0.transactions.contains { $0.purchaseMs <= ms } }.map(\.originalTransactionID)
            #expect(receipt.originalTransactionIDs == chainsSeen)
            #expect(ReceiptToken(encoded: text) == ReceiptToken(environment: subscriber.environment, subscriberIndex: subscriber.index, version: expected.count))
            // Apple's framing: an indefinite-length ContentInfo of signedData.
            #expect(Array(try #require(Data(base64Encoded: text)).prefix(4)) == [0x30, 0x80, 0x06, 0x09])
        }
        if kind == "production, two chains" {
            let receipt = try AppReceipt(base64: subscriber.receipt(at: Self.start + 199 * Self.day))
            #expect(receipt.originalTransactionIDs == subscriber.chains.map(\.originalTransactionID))
            #expect(receipt.originalTransactionIDs.count == 2)
        }
        if kind == "sandbox" {
            #expect(subscriber.chains[0].originalTransactionID.hasPrefix("2"))
            #expect(ReceiptToken(encoded: subscriber.receipt(at: Self.start))?.environment == "Sandbox")
        }
    }

    @Test func simulatorReceiptsAreStableIdentities() throws {
        let subscriber = try Self.subscriber { $0.environment == "Production" && $0.chains.count == 1 && $0.chains[0].transactions.count >= 3 }
        let second = subscriber.chains[0].transactions[1].purchaseMs
        // The same transactions give the same bytes, at any instant; one more, a new receipt.
        #expect(subscriber.receipt(at: second) == subscriber.receipt(at: second))
        #expect(subscriber.receipt(at: second) == subscriber.receipt(at: subscriber.chains[0].transactions[2].purchaseMs - 1))
        #expect(subscriber.receipt(at: second) != subscriber.receipt(at: second - 1))
        let exact = try AppReceipt(base64: subscriber.receipt(at: second))
        #expect(exact.inAppPurchases.first?.transactionID == subscriber.chains[0].originalTransactionID)
        #expect(exact.inAppPurchases.first?.purchaseDateMs == subscriber.chains[0].transactions[0].purchaseMs)
    }

    @Test func receiptTokenRoundTrips() throws {
        for token in [ReceiptToken(environment: "Production", subscriberIndex: 0, version: 0),
                      ReceiptToken(environment: "Sandbox", subscriberIndex: 12_345, version: 17)] {
            #expect(ReceiptToken(encoded: token.encoded) == token)
            let receipt = try AppReceipt(base64: token.encoded)
            #expect(receipt == AppReceipt(bundleID: nil, inAppPurchases: []))
        }
        #expect(ReceiptToken(encoded: "%%% not base64 %%%") == nil)
        #expect(ReceiptToken(encoded: Self.base64(Array("simulated-app-store-receipt|Production|1|1".utf8))) == nil)
        #expect(ReceiptToken(encoded: Self.base64(F.indefiniteReceipt(F.payload(inApps: [])))) == nil)
    }

    // MARK: Hand-built receipts

    static let monthly = F.inApp(product: "premium.monthly", transaction: "1000000001", original: "1000000000",
                                 purchase: "2024-05-01T12:00:00Z", expires: "2024-06-01T12:00:00.250Z")
    static let renewal = F.inApp(product: "premium.monthly", transaction: "1000000002", original: "1000000000",
                                 purchase: "2024-06-01T12:00:00Z", expires: "")
    static let other = F.inApp(product: "storage.monthly", transaction: "2000000001", original: "2000000000",
                               purchase: "2024-02-29T23:59:59Z", expires: "1999-12-31T22:30:00-01:30")
    static let handBuilt = AppReceipt(bundleID: "com.example.app", inAppPurchases: [
        .init(productID: "premium.monthly", transactionID: "1000000001", originalTransactionID: "1000000000",
              purchaseDateMs: 1_714_564_800_000, expiresDateMs: 1_717_243_200_250),
        .init(productID: "premium.monthly", transactionID: "1000000002", originalTransactionID: "1000000000",
              purchaseDateMs: 1_717_243_200_000, expiresDateMs: nil),
        .init(productID: "storage.monthly", transactionID: "2000000001", originalTransactionID: "2000000000",
              purchaseDateMs: 1_709_251_199_000, expiresDateMs: 946_684_800_000),
    ])

    @Test(arguments: [1, 2, 5])
    func indefiniteLengthBERWithAConstructedContentParses(segments: Int) throws {
        let bytes = F.indefiniteReceipt(F.payload(inApps: [Self.monthly, Self.renewal, Self.other]), segments: segments)
        let receipt = try AppReceipt(base64: Self.base64(bytes))
        #expect(receipt == Self.handBuilt)
        #expect(receipt.originalTransactionIDs == ["1000000000", "2000000000"])
        #expect(try AppReceipt(bytes: bytes) == Self.handBuilt)
    }

    @Test func definiteLengthDERParses() throws {
        let receipt = try AppReceipt(base64: Self.base64(F.definiteReceipt(F.payload(inApps: [Self.monthly, Self.renewal, Self.other]))))
        #expect(receipt == Self.handBuilt)
        // Line breaks, as some clients wrap base64, are tolerated.
        let wrapped = Self.base64(F.definiteReceipt(F.payload(inApps: [Self.monthly]))).enumerated()
            .map { $0.offset > 0 && $0.offset % 76 == 0 ? "\r\n\($0.element)" : String($0.element) }.joined()
        #expect(try AppReceipt(base64: wrapped).inAppPurchases == [Self.handBuilt.inAppPurchases[0]])
    }

    @Test func aReceiptWithoutPurchasesOrBundleID() throws {
        let payload = F.tlv(0x31, F.attribute(0, F.utf8("ProductionSandbox")))
        #expect(try AppReceipt(base64: Self.base64(F.indefiniteReceipt(payload))) == AppReceipt(bundleID: nil, inAppPurchases: []))
    }

    // MARK: Malformed input

    @Test func notBase64EmptyAndTooLarge() {
        #expect(Self.error("%%% not base64 %%%") == .notBase64)
        #expect(Self.error("QUJD!") == .notBase64)
        #expect(Self.error("") == .empty)
        #expect(Self.error(" \n ") == .empty)
        #expect((try? AppReceipt(bytes: [])) == nil)
        let huge = String(repeating: "A", count: AppReceipt.maximumBase64Length + 4)
        #expect(Self.error(huge) == .tooLarge(characters: AppReceipt.maximumBase64Length + 4))
    }

    @Test func truncatedAnywhereIsNotAContainer() throws {
        for bytes in [F.indefiniteReceipt(F.payload(inApps: [Self.monthly, Self.other])), F.definiteReceipt(F.payload(inApps: [Self.monthly]))] {
            for cut in [1, 2, 4, 11, 15, bytes.count / 3, bytes.count / 2, bytes.count - 3, bytes.count - 2, bytes.count - 1] {
                let error = Self.error(Self.base64(Array(bytes.prefix(cut))))
                guard case .notPKCS7(let reason) = error else {
                    Issue.record("cut at \(cut) of \(bytes.count): \(String(describing: error))")
                    continue
                }
                #expect(reason.hasPrefix("the ASN.1 framing is broken"))
            }
        }
    }

    @Test func containerMistakes() {
        let payload = F.payload(inApps: [Self.monthly])
        #expect(Self.error(Self.base64(F.indefiniteReceipt(payload, contentType: F.envelopedDataOID)))
            == .notPKCS7(reason: "its content type is not signedData (1.2.840.113549.1.7.2)"))
        #expect(Self.error(Self.base64(F.definiteReceipt(payload, contentType: F.integer(7))))
            == .notPKCS7(reason: "its content type is not signedData (1.2.840.113549.1.7.2)"))
        #expect(Self.error(Self.base64(F.tlv(0x31, []))) == .notPKCS7(reason: "it does not start with a ContentInfo SEQUENCE"))
        #expect(Self.error(Self.base64(Array("plain text, not DER".utf8))) == .notPKCS7(reason: "the ASN.1 framing is broken: truncatedASN1Field"))
        // The encapsulated content is not id-data, or absent, or empty: no receipt inside.
        let notData = F.tlv(0x30, F.envelopedDataOID + F.tlv(0xA0, F.tlv(0x04, payload)))
        #expect(Self.error(Self.base64(F.definiteReceipt(payload, encapsulated: notData))) == .noReceiptPayload)
        #expect(Self.error(Self.base64(F.definiteReceipt(payload, encapsulated: F.tlv(0x30, F.dataOID)))) == .noReceiptPayload)
        #expect(Self.error(Self.base64(F.definiteReceipt([]))) == .noReceiptPayload)
        let utf8Content = F.tlv(0x30, F.dataOID + F.tlv(0xA0, F.utf8("receipt")))
        #expect(Self.error(Self.base64(F.definiteReceipt(payload, encapsulated: utf8Content)))
            == .notPKCS7(reason: "the encapsulated content is not an [0] OCTET STRING"))
    }

    @Test func payloadMistakes() {
        #expect(Self.error(Self.base64(F.definiteReceipt(F.tlv(0x30, F.attribute(2, F.utf8("x")))))) == .malformedPayload(reason: "not a SET of attributes"))
        #expect(Self.error(Self.base64(F.definiteReceipt(Array("not DER".utf8)))) == .malformedPayload(reason: "not valid DER/BER"))
        #expect(Self.error(Self.base64(F.definiteReceipt(F.tlv(0x31, F.attribute(2, F.integer(5)))))) == .malformedPayload(reason: "attribute 2 (bundle_id) is not a UTF8String"))
        let noValue = F.tlv(0x31, F.tlv(0x30, F.integer(2) + F.integer(1) + F.utf8("x")))
        #expect(Self.error(Self.base64(F.definiteReceipt(noValue))) == .malformedPayload(reason: "the value of attribute 2 is not an OCTET STRING"))
        #expect(Self.error(Self.base64(F.definiteReceipt(F.tlv(0x31, F.tlv(0x30, F.integer(2)))))) == .malformedPayload(reason: "an entry is not a SEQUENCE { type, version, value }"))
    }

    static let wrongTypes: [(type: Int, value: [UInt8], expected: AppReceiptError)] = [
        (1703, F.integer(1_000_000_001), .malformedInAppAttribute(type: 1703, reason: "is not a UTF8String")),
        (1702, F.ia5("premium.monthly"), .malformedInAppAttribute(type: 1702, reason: "is not a UTF8String")),
        (1705, F.tlv(0x04, []), .malformedInAppAttribute(type: 1705, reason: "is not a UTF8String")),
        (1704, F.utf8("2024-05-01T12:00:00Z"), .malformedInAppAttribute(type: 1704, reason: "is not an IA5String")),
        (1708, F.ia5("2024-13-01T12:00:00Z"), .malformedInAppAttribute(type: 1708, reason: "is not an RFC 3339 date")),
        (1708, F.ia5("2024-05-01 12:00:00 Etc/GMT"), .malformedInAppAttribute(type: 1708, reason: "is not an RFC 3339 date")),
        (1701, F.utf8("1"), .malformedInAppAttribute(type: 1701, reason: "is not an INTEGER")),
        (1711, F.ia5("9"), .malformedInAppAttribute(type: 1711, reason: "is not an INTEGER")),
    ]

    @Test(arguments: wrongTypes)
    func inAppAttributeOfTheWrongType(type: Int, value: [UInt8], expected: AppReceiptError) {
        let inApp = F.inApp(product: "p", transaction: "2", original: "1", purchase: "2024-05-01T12:00:00Z", expires: "", fields: [type: value])
        #expect(Self.error(Self.base64(F.indefiniteReceipt(F.payload(inApps: [Self.monthly, inApp])))) == expected)
        #expect(expected.description.contains("Malformed in-app attribute: attribute \(type)"))
    }

    @Test func inAppAttributeMissingOrNotASet() {
        for missing in [1702, 1703, 1705] {
            let inApp = F.inApp(product: "p", transaction: "2", original: "1", purchase: "", expires: "", omitting: [missing])
            guard case .malformedInAppAttribute(let type, _) = Self.error(Self.base64(F.definiteReceipt(F.payload(inApps: [inApp])))) else {
                Issue.record("no error for a missing \(missing)")
                continue
            }
            #expect(type == missing)
        }
        #expect(Self.error(Self.base64(F.definiteReceipt(F.payload(inApps: [F.utf8("not a set")]))))
            == .malformedInAppAttribute(type: nil, reason: "is not a SET of attributes"))
        #expect(Self.error(Self.base64(F.definiteReceipt(F.payload(inApps: [[0x31, 0x05, 0x30]]))))
            == .malformedInAppAttribute(type: nil, reason: "is not valid DER/BER"))
    }

    @Test func garbageAndHostileInputFailQuickly() {
        // Nesting far deeper than the parser's limit, lengths larger than the input, random bytes.
        let deep = Array(repeating: [UInt8]([0x30, 0x80]), count: 200_000).flatMap { $0 }
        guard case .notPKCS7 = Self.error(Self.base64(deep)) else { Issue.record("deep nesting was accepted"); return }
        #expect(Self.error(Self.base64([0x30, 0x84, 0x7F, 0xFF, 0xFF, 0xFF, 0x06])) == .notPKCS7(reason: "the ASN.1 framing is broken: truncatedASN1Field"))
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 1...600, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(Self.error(Self.base64(bytes)) != nil)
        }
        // Many in-app purchases still parse, in one linear pass.
        let many = (0..<5000).map { F.inApp(product: "p", transaction: "\($0 + 2)", original: "\($0 % 7 + 1)", purchase: "2024-05-01T12:00:00Z", expires: "") }
        let receipt = try? AppReceipt(base64: Self.base64(F.indefiniteReceipt(F.payload(inApps: many), segments: 40)))
        #expect(receipt?.inAppPurchases.count == 5000)
        #expect(receipt?.originalTransactionIDs == (1...7).map(String.init))
    }

    @Test func messagesSayWhatIsWrongAndWhatToDo() {
        #expect(AppReceiptError.notBase64.description.contains("not base64"))
        #expect(AppReceiptError.notPKCS7(reason: "x").description.contains("not a PKCS#7 container"))
        #expect(AppReceiptError.noReceiptPayload.description.contains("no receipt payload"))
        #expect(AppReceiptError.empty.description.contains("Ask the app"))
        #expect(AppReceiptError.tooLarge(characters: 5).description.contains("5 characters"))
    }

    static let dates: [(text: String, ms: Int64)] = [
        ("2024-05-01T12:00:00Z", 1_714_564_800_000), ("2024-05-01t12:00:00.5z", 1_714_564_800_500),
        ("2024-02-29T23:59:59Z", 1_709_251_199_000), ("1999-12-31T22:30:00-01:30", 946_684_800_000),
        ("2024-05-01T14:00:00.123456+02:00", 1_714_564_800_123), ("1970-01-01T00:00:00Z", 0),
    ]

    @Test(arguments: dates)
    func rfc3339Dates(text: String, ms: Int64) {
        #expect(RFC3339Timestamp.milliseconds(text) == ms)
    }

    @Test func rfc3339Rejects() {
        for text in ["", "2024-05-01", "2024-05-01T12:00:00", "2023-02-29T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T12:00:00.Z", "2024-05-01T12:00:00Z ", "２024-05-01T12:00:00Z"] {
            #expect(RFC3339Timestamp.milliseconds(text) == nil, "\(text)")
        }
    }
}
