import EntitlementCore
import Foundation
import Logging
import NIOCore
import NIOHTTP1

extension VerifyReceiptClient {
    /// One HTTP exchange, classified: an answer to read, a failure worth retrying, or a final one.
    struct Exchange {
        enum Outcome {
            /// Boxed, as ``Verification/Result/answered(_:)`` is.
            indirect case answer(VerifyReceiptResponse)
            case transient(VerificationFailure, retryAfter: Duration?)
            case permanent(VerificationFailure)
        }
        var outcome: Outcome
        var deprecation: String?

        /// What the exchange says about the store, for the run's concurrency: a `Retry-After` or
        /// a 429 asks to slow down; a failure that may pass (a 5xx, a timeout, an outage page, a
        /// status Apple says to retry) is transient; anything else is an answer.
        var signal: AnswerSignal {
            switch outcome {
            case .transient(let failure, let retryAfter):
                return retryAfter != nil || failure.httpStatus == 429 ? .overload : .transient(failure.reason)
            case .answer(let response):
                return response.status.retryDecision(isRetryable: response.isRetryable) == .retry ? .transient(.appleStatus) : .calm
            case .permanent:
                return .calm
            }
        }
    }

    /// The headers of every request; `Host` and `Content-Length` are added per request.
    static let requestHeaders = HTTPHeaders([
        ("Content-Type", "application/json"), ("Accept", "application/json"), ("User-Agent", "status-poller"),
    ])

    /// Sends one request and reads the answer. Only cancellation is thrown.
    func send(receipt: String, to environment: AppStoreEnvironment, logger: Logger) async throws -> Exchange {
        guard let endpoint = environment == .production ? endpoints.production : endpoints.sandbox else {
            let url = environment == .production ? configuration.productionURL : configuration.sandboxURL
            return Exchange(outcome: .permanent(.init(.transport, "the \(environment.rawValue) URL '\(url)' is not an http(s) URL")))
        }
        let payload = VerifyReceiptRequest(
            receiptData: receipt, password: configuration.sharedSecret.value,
            excludeOldTransactions: configuration.excludeOldTransactions)
        let response: HTTPResponse
        do {
            response = try await http.post(endpoint, headers: Self.requestHeaders, body: payload.body, timeout: configuration.requestTimeout)
        } catch {
            try Task.checkCancellation()
            return Exchange(outcome: Self.classify(transportError: error, environment: environment))
        }
        let deprecation = Self.deprecationNotice(response.headers)
        let code = response.status
        guard (200..<300).contains(code) else {
            let failure = VerificationFailure(.httpStatus, "\(environment.rawValue) answered HTTP \(code)", httpStatus: code)
            if code >= 500 || code == 429 {
                return Exchange(outcome: .transient(failure, retryAfter: Self.retryAfter(response.headers)), deprecation: deprecation)
            }
            return Exchange(outcome: .permanent(failure), deprecation: deprecation)
        }
        return Exchange(outcome: Self.decode(response.body, environment: environment, httpStatus: code), deprecation: deprecation)
    }

    /// Reads a 2xx body. Not JSON at all (an outage page, a truncated body) is transient; JSON of
    /// the wrong shape is final, because asking again would get the same answer.
    static func decode(_ body: ByteBuffer, environment: AppStoreEnvironment, httpStatus: Int) -> Exchange.Outcome {
        do {
            return .answer(try VerifyReceiptResponse(json: body.readableBytesView))
        } catch let error as WireFormatError {
            return .permanent(VerificationFailure(.unexpectedResponse, "answer is not verifyReceipt's shape: \(error)", httpStatus: httpStatus))
        } catch {
            let notJSON = VerificationFailure(
                .notJSON, "\(environment.rawValue) answered HTTP \(httpStatus) with a body that is not JSON (\(body.readableBytes) bytes)", httpStatus: httpStatus)
            return .transient(notJSON, retryAfter: nil)
        }
    }

    static func classify(transportError error: any Error, environment: AppStoreEnvironment) -> Exchange.Outcome {
        let failure = VerificationFailure.transport(error, environment: environment)
        return failure.isTransient ? .transient(failure, retryAfter: nil) : .permanent(failure)
    }

    /// `Retry-After` in seconds (the form Apple's front ends use); an HTTP date is ignored, and an
    /// absurd value (`inf`, `1e300`) is cut to a day before the retry policy's own cap applies.
    static func retryAfter(_ headers: HTTPHeaders) -> Duration? {
        guard let value = headers.first(name: "Retry-After"), let seconds = Double(value.trimmingCharacters(in: .whitespaces)),
            seconds.isFinite, seconds >= 0
        else { return nil }
        return .milliseconds(Int64(min(seconds, 86_400) * 1000))
    }

    /// Apple announces verifyReceipt's retirement through RFC 8594 headers.
    static func deprecationNotice(_ headers: HTTPHeaders) -> String? {
        let parts = ["Deprecation", "Sunset"].compactMap { name in headers.first(name: name).map { "\(name): \($0)" } }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }
}
