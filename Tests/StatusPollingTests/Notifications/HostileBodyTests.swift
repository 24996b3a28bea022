import AsyncHTTPClient
import Foundation
import NIOCore
import ReceiverServer
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// 10,000 hostile bodies posted to the receiver over real HTTP, on every store: each gets its own
/// 4xx (or, for a genuine notification of the other environment, 200 changing nothing), no row
/// changes, nothing is stored but what was genuine, and the receiver neither crashes nor hangs
/// (every request is answered within its timeout, and a good notification is applied after).
@Suite struct HostileBodyTests {
    typealias Kit = SignedPayloads
    typealias Make = NotificationVerificationTests
    typealias Server = ReceiverServerTests

    /// A hostile body and the status it must get.
    struct Hostile: Sendable {
        var kind: String
        var body: [UInt8]
        var status: Int
    }

    static let maxBody = 64 * 1024

    /// `count` bodies of every kind, drawn with a fixed seed.
    static func bodies(count: Int, pki: TestPKI, foreign: TestPKI, noLeafMarker: TestPKI) -> [Hostile] {
        var random = SplitMix(seed: 23)
        let good = try! #require(Server.signed(pki, uuid: "good")["signedPayload"] as? String)
        let goodBody = Array(try! JSONSerialization.data(withJSONObject: ["signedPayload": good]))
        func json(_ object: Any) -> [UInt8] { Array(try! JSONSerialization.data(withJSONObject: object)) }
        func signedPayload(_ jws: String) -> [UInt8] { json(["signedPayload": jws]) }
        let makers: [(String, Int, (Int) -> [UInt8])] = [
            ("jws parts", 400, { i in signedPayload(["", "a", "a.b", "a.b.c.d", "..", "\(i).\(i).\(i)"][i % 6]) }),
            ("not a string", 400, { i in json(["signedPayload": [[i], NSNull(), i, ["x": i]][i % 4]]) }),
            ("another root", 400, { i in json(Server.signed(foreign, uuid: "foreign-\(i)")) }),
            ("leaf without Apple's marker", 400, { i in json(Server.signed(noLeafMarker, uuid: "nomarker-\(i)")) }),
            ("tampered", 400, { i in
                // A character inside one segment (never its last, whose spare bits may not count)
                // replaced by another base64url character: the bytes differ, the signature fails.
                var characters = Array(good)
                let dots = characters.indices.filter { characters[$0] == "." }
                let segment = i % 3
                let start = segment == 0 ? 0 : dots[segment - 1] + 1
                let end = segment == 2 ? characters.count - 1 : dots[segment] - 1
                let at = start + Int(random.next() % UInt64(end - start))
                let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
                var replacement = alphabet[Int(random.next() % 64)]
                while replacement == characters[at] { replacement = alphabet[Int(random.next() % 64)] }
                characters[at] = replacement
                return signedPayload(String(characters))
            }),
            ("another app", 400, { i in json(Server.signed(pki, uuid: "app-\(i)", transaction: ["bundleId": "com.other.app"])) }),
            ("another app id", 400, { i in
                let data = Make.data(pki, changes: ["appAppleId": 999_000 + i])
                return signedPayload(Make.outer(pki, data: data, changes: ["notificationUUID": "appid-\(i)"]))
            }),
            ("sandbox transaction in a production notification", 400, { i in
                let data = Make.data(pki, transaction: Kit.transaction(["environment": "Sandbox"]), renewal: nil)
                return signedPayload(Make.outer(pki, data: data, changes: ["notificationUUID": "mixed-\(i)"]))
            }),
            ("wrong types", 400, { i in
                signedPayload(Make.outer(pki, data: nil, changes: ["notificationUUID": "types-\(i)", "signedDate": "yesterday", "notificationType": i]))
            }),
            ("wrong V1 password", 401, { i in json(Server.version1(password: "guess-\(i)")) }),
            ("deep nesting", 400, { i in Array(String(repeating: "[", count: 5_000 + i % 100).utf8) + Array(String(repeating: "]", count: 5_000 + i % 100).utf8) }),
            ("oversized", 413, { i in Array(#"{"signedPayload":""#.utf8) + [UInt8](repeating: UInt8(ascii: "A"), count: maxBody + i % 1000) + Array(#""}"#.utf8) }),
            ("invalid UTF-8", 400, { i in Array(#"{"signedPayload":""#.utf8) + [0xC3, 0x28, 0xFF, UInt8(i % 128)] + Array(#""}"#.utf8) }),
            ("random bytes", 400, { i in (0..<(1 + i % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) | 0x80 } }),
            ("truncated", 400, { i in Array(goodBody.prefix(1 + i % (goodBody.count - 1))) }),
            ("neither version", 400, { i in json(["notificationType": "DID_RENEW", "n": i]) }),
        ]
        return (0..<count).map { i in
            let (kind, status, make) = makers[i % makers.count]
            return Hostile(kind: kind, body: make(i / makers.count), status: status)
        }
    }

    @Test(arguments: StoreKind.available) func tenThousandHostileBodiesGetTheirStatusAndChangeNothing(kind: StoreKind) async throws {
        try await withStore(kind) { db in
            let pki = try TestPKI()
            let foreign = try TestPKI()
            let noLeafMarker = try TestPKI(.init(leafMarker: false))
            let id = try await db.insert(userID: "u", receipt: "R", NotificationIngestTests.monthly)
            let hostile = Self.bodies(count: 10_000, pki: pki, foreign: foreign, noLeafMarker: noLeafMarker)
            let metrics = ReceiverMetrics()
            let mismatches = try await Server.serving(Server.receiver(db.store, pki: pki), metrics: metrics, maxBodyBytes: Self.maxBody) { (poster: Server.Poster) async throws in
                var mismatches: [String] = []
                for start in stride(from: 0, to: hostile.count, by: 16) {
                    let slice = hostile[start..<min(start + 16, hostile.count)]
                    let statuses = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                        for (offset, body) in slice.enumerated() { group.addTask { (offset, try await poster.post(body.body).status) } }
                        return try await group.reduce(into: [Int: Int]()) { $0[$1.0] = $1.1 }
                    }
                    for (offset, body) in slice.enumerated() where statuses[offset] != body.status {
                        mismatches.append("\(body.kind): \(statuses[offset] ?? -1), expected \(body.status)")
                    }
                }
                // Still serving: a genuine notification goes through.
                #expect(try await poster.post(json: Server.signed(pki, uuid: "after")) == (200, "{\"outcome\":\"applied\"}\n"))
                return mismatches
            }
            #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
            #expect(try await db.row("SELECT count(*) AS n FROM app_store_notifications") == ["n": "1"])
            #expect(try await db.store.history(userID: "u").map(\.notificationID) == ["after"])
            var renewed = NotificationIngestTests.monthly
            renewed.expiresAt = 1_791_600_000_000
            renewed.transactionID = "1000000123"
            renewed.purchasedAt = 1_789_000_000_000
            #expect(try await db.store.subscription(id: id)?.state == renewed)
        }
    }
}
