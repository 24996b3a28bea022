/// The App Store Server API's signed payloads as the tests start them: a transaction and a renewal
/// info of one chain, signed at one instant, each changed as a test needs before `TestPKI` signs it.
enum SignedPayloads {
    static let signedDate: Int64 = 1_790_000_000_000
    static let bundle = "com.example.premium"

    static func transaction(_ changes: [String: Any] = [:]) -> [String: Any] {
        var payload: [String: Any] = [
            "transactionId": "1000000123", "originalTransactionId": "1000000100", "bundleId": bundle,
            "productId": "com.example.premium.monthly", "purchaseDate": 1_789_000_000_000, "expiresDate": 1_791_600_000_000,
            "type": "Auto-Renewable Subscription", "environment": "Production", "signedDate": signedDate,
        ]
        for (key, value) in changes { payload[key] = value }
        return payload
    }

    static func renewal(_ changes: [String: Any] = [:]) -> [String: Any] {
        var payload: [String: Any] = [
            "originalTransactionId": "1000000100", "productId": "com.example.premium.monthly",
            "autoRenewProductId": "com.example.premium.yearly", "autoRenewStatus": 1, "environment": "Production", "signedDate": signedDate,
        ]
        for (key, value) in changes { payload[key] = value }
        return payload
    }
}
