import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

extension VerifyReceiptClient {
    /// One HTTP exchange, classified: an answer to read, a failure worth retrying, or a final one.
    struct Exchange {
        enum Outcome {
            case answer(VerifyReceiptResponse)
            case transient(VerificationFailure, retryAfter: Duration?)
            case permanent(VerificationFailure)
        }
        var outcome: Outcome
        var deprecation: String?
    }

    /// Sends one request and reads the answer. Only cancellation is thrown.
    func send(receipt: String, to environment: AppStoreEnvironment, logger: Logger) async throws -> Exchange {
        let url = environment == .production ? configuration.productionURL : configuration.sandboxURL
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: "application/json")
        let payload = VerifyReceiptRequest(
            receiptData: receipt, password: configuration.sharedSecret.value,
            excludeOldTransactions: configuration.excludeOldTransactions)
        request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(payload)))

        let response: HTTPClientResponse
        let body: ByteBuffer
        do {
            response = try await http.execute(request, timeout: .init(configuration.requestTimeout), logger: logger)
            body = try await response.body.collect(upTo: configuration.maxResponseBytes)
        } catch {
            try Task.checkCancellation()
            return Exchange(outcome: Self.classify(transportError: error, environment: environment))
        }
        let deprecation = Self.deprecationNotice(response.headers)
        let code = Int(response.status.code)
        guard (200..<300).contains(code) else {
            let failure = VerificationFailure(.httpStatus, "\(environment.rawValue) answered HTTP \(code)", httpStatus: code)
            if code >= 500 || code == 429 {
                return Exchange(outcome: .transient(failure, retryAfter: Self.retryAfter(response.headers)), deprecation: deprecation)
            }
            return Exchange(outcome: .permanent(failure), deprecation: deprecation)
        }
        return Exchange(outcome: Self.decode(body, environment: environment, httpStatus: code), deprecation: deprecation)
    }

    /// Reads a 2xx body. Not JSON at all (an outage page, a truncated body) is transient; JSON of
    /// the wrong shape is final, because asking again would get the same answer.
    static func decode(_ body: ByteBuffer, environment: AppStoreEnvironment, httpStatus: Int) -> Exchange.Outcome {
        let bytes = Data(body.readableBytesView)
        let firstByte = bytes.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
        let notJSON = VerificationFailure(.notJSON, "\(environment.rawValue) answered HTTP \(httpStatus) with a body that is not JSON (\(bytes.count) bytes)", httpStatus: httpStatus)
        guard firstByte == UInt8(ascii: "{") else { return .transient(notJSON, retryAfter: nil) }
        do {
            return .answer(try JSONDecoder().decode(VerifyReceiptResponse.self, from: bytes))
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            return .transient(notJSON, retryAfter: nil)
        } catch {
            return .permanent(VerificationFailure(.unexpectedResponse, "answer is not verifyReceipt's shape: \(Self.describe(error))", httpStatus: httpStatus))
        }
    }

    static func classify(transportError error: any Error, environment: AppStoreEnvironment) -> Exchange.Outcome {
        if let httpError = error as? HTTPClientError,
            [.deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout].contains(httpError)
        {
            return .transient(.init(.timeout, "\(environment.rawValue) did not answer in time (\(httpError))"), retryAfter: nil)
        }
        if case ChannelError.connectTimeout = error {
            return .transient(.init(.timeout, "\(environment.rawValue) connection timed out"), retryAfter: nil)
        }
        if error is NIOTooManyBytesError {
            return .permanent(.init(.unexpectedResponse, "\(environment.rawValue) answered with a body over the size limit"))
        }
        return .transient(.init(.transport, "\(environment.rawValue) connection failed: \(String(describing: error).prefix(200))"), retryAfter: nil)
    }

    /// `Retry-After` in seconds (the form Apple's front ends use); an HTTP date is ignored.
    static func retryAfter(_ headers: HTTPHeaders) -> Duration? {
        guard let value = headers.first(name: "Retry-After"), let seconds = Double(value.trimmingCharacters(in: .whitespaces)), seconds >= 0 else { return nil }
        return .milliseconds(Int64(seconds * 1000))
    }

    /// Apple announces verifyReceipt's retirement through RFC 8594 headers.
    static func deprecationNotice(_ headers: HTTPHeaders) -> String? {
        let parts = ["Deprecation", "Sunset"].compactMap { name in headers.first(name: name).map { "\(name): \($0)" } }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// A decoding error in a line: the key path and what was wrong, never the values.
    static func describe(_ error: any Error) -> String {
        guard let decoding = error as? DecodingError else { return String(describing: error) }
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch decoding {
        case .dataCorrupted(let c): return "\(path(c)): \(c.debugDescription)"
        case .keyNotFound(let key, let c): return "\(path(c)): missing \(key.stringValue)"
        case .typeMismatch(_, let c), .valueNotFound(_, let c): return "\(path(c)): \(c.debugDescription)"
        @unknown default: return String(describing: decoding)
        }
    }
}
