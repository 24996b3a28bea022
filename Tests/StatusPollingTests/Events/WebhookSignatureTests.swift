import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The signature of Standard Webhooks, against the spec's published vector, and the checks on a
/// secret and an endpoint that keep a mistake from going out.
@Suite struct WebhookSignatureTests {
    /// standard-webhooks/standard-webhooks, libraries/python/tests/test_webhooks.py, `test_sign_function`.
    @Test func theSignatureMatchesTheSpecsTestVector() throws {
        let secret = try WebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        let signature = WebhookSignature.sign(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: #"{"test": 2432232314}"#, secret: secret)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(WebhookSignature.verify(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", body: #"{"test": 2432232314}"#,
            header: "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= " + signature, secret: secret, nowSeconds: 1_614_265_330))
        // A changed body, an old timestamp, another signature: refused.
        #expect(!WebhookSignature.verify(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", body: #"{"test": 2432232315}"#, header: signature, secret: secret,
            nowSeconds: 1_614_265_330))
        #expect(!WebhookSignature.verify(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", body: #"{"test": 2432232314}"#, header: signature, secret: secret,
            nowSeconds: 1_614_265_330 + 301))
        #expect("\(secret)" == "whsec_(hidden)")
    }

    @Test(arguments: [
        ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "it must start with whsec_"),
        ("whsec_not base64!", "after whsec_ it must be base64"),
        ("whsec_c2hvcnQ=", "its key must be 24 to 64 bytes, not 5"),
    ])
    func aBadSecretIsRefusedWithoutRepeatingIt(text: String, reason: String) {
        #expect(throws: WebhookSecretError.self) { try WebhookSecret(text) }
        do { _ = try WebhookSecret(text) } catch let error as WebhookSecretError { #expect(error.reason.hasPrefix(reason), "\(error.reason)") } catch {}
    }

    @Test func aGeneratedSecretParses() throws {
        let text = WebhookSecret.generate()
        #expect(text.hasPrefix("whsec_"))
        _ = try WebhookSecret(text)
    }

    @Test func endpointsAreHTTPSOrLoopbackWithoutCredentials() throws {
        let secret = try WebhookSecret(WebhookSecret.generate())
        _ = try WebhookEndpoint(name: "web", url: "https://api.example.com/hooks/app-store", secret: secret)
        _ = try WebhookEndpoint(name: "local", url: "http://127.0.0.1:9000/hook", secret: secret)
        _ = try WebhookEndpoint(name: "local6", url: "http://[::1]:9000/hook", secret: secret)
        for (name, url) in [("web", "http://api.example.com/hook"), ("web", "https://user:pw@api.example.com/hook"), ("web", "ftp://x/"), ("a b", "https://x/")] {
            #expect(throws: WebhookEndpointError.self, "\(url)") { try WebhookEndpoint(name: name, url: url, secret: secret) }
        }
    }

    @Test func retriesBackOffExponentiallyWithJitterUpToTheCap() {
        let policy = DeliveryPolicy()
        #expect(policy.delay(afterAttempt: 1, jitter: 0) == .milliseconds(2_500))
        #expect(policy.delay(afterAttempt: 1, jitter: 0.999_999) == .milliseconds(4_999))
        #expect(policy.delay(afterAttempt: 2, jitter: 0) == .milliseconds(5_000))
        #expect(policy.delay(afterAttempt: 5, jitter: 0.5) == .milliseconds(60_000))
        #expect(policy.delay(afterAttempt: 11, jitter: 1) == .milliseconds(3_600_000))
        #expect(policy.delay(afterAttempt: 400, jitter: 0) == .milliseconds(1_800_000))
        var a = SplitMix64(seed: 38), b = SplitMix64(seed: 38)
        #expect((0..<5).map { _ in a.next() } == (0..<5).map { _ in b.next() })
    }
}
