import EntitlementCore
import Foundation
import Logging
import NIOCore
import NIOHTTP1

extension ServerAPIClient {
    /// One GET, classified.
    enum Exchange {
        /// HTTP 200: the body to decode.
        case ok(ByteBuffer, httpStatus: Int)
        /// Apple's `errorCode` body with a non-2xx status.
        case apple(code: Int, httpStatus: Int, retryAfter: Duration?)
        /// 401: the token was refused.
        case unauthorized
        case transient(VerificationFailure, retryAfter: Duration?)
        case permanent(VerificationFailure)

        /// What the exchange says about the store, for the run's concurrency: a 429, Apple's
        /// 4290000 or a `Retry-After` asks to slow down; a 5xx, a timeout or a code Apple says to
        /// retry is transient; anything else is an answer.
        var signal: AnswerSignal {
            switch self {
            case .ok, .unauthorized, .permanent:
                return .calm
            case .apple(let code, let httpStatus, let retryAfter):
                if retryAfter != nil || httpStatus == 429 || code == ServerAPIErrorCode.rateLimitExceeded.rawValue { return .overload }
                switch ServerAPIErrorCode(rawValue: code)?.handling {
                case .retry?, .retryLater?: return .transient(.appleStatus)
                case .otherEnvironment?, .refusesApp?: return .calm
                case nil: return httpStatus >= 500 ? .transient(.appleStatus) : .calm
                }
            case .transient(let failure, let retryAfter):
                return retryAfter != nil || failure.httpStatus == 429 ? .overload : .transient(failure.reason)
            }
        }
    }

    /// Sends one request for `path` to `environment`'s base URL, in the rate limit: a GET, or a
    /// POST of `json` when given (a PUT with `put`). Throws `CancellationError`, or ``RunAbort``
    /// when no bearer token can be signed (no request could go out).
    func send(path: String, to environment: AppStoreEnvironment, json: [UInt8]? = nil, put: Bool = false) async throws -> Exchange {
        let base = environment == .production ? endpoints.production : endpoints.sandbox
        guard let endpoint = base?.appending(path: path) else {
            let url = environment == .production ? configuration.productionURL : configuration.sandboxURL
            return .permanent(.init(.transport, "the \(environment.rawValue) Server API URL '\(url)' is not an http(s) URL"))
        }
        try await (environment == .production ? limiters.production : limiters.sandbox).acquire()
        let authorization: String
        do {
            authorization = try bearer.authorization()
        } catch {
            throw RunAbort.credentialsRejected(backend: .serverAPI, detail: "\(error). The run stopped before sending a request.")
        }
        var headers = HTTPHeaders([("Authorization", authorization), ("Accept", "application/json"), ("User-Agent", "status-poller")])
        let response: HTTPResponse
        do {
            if let json {
                headers.add(name: "Content-Type", value: "application/json")
                response = put
                    ? try await http.put(endpoint, headers: headers, body: ByteBuffer(bytes: json), timeout: configuration.requestTimeout)
                    : try await http.post(endpoint, headers: headers, body: ByteBuffer(bytes: json), timeout: configuration.requestTimeout)
            } else {
                response = try await http.get(endpoint, headers: headers, timeout: configuration.requestTimeout)
            }
        } catch {
            try Task.checkCancellation()
            let failure = VerificationFailure.transport(error, environment: environment)
            return failure.isTransient ? .transient(failure, retryAfter: nil) : .permanent(failure)
        }
        let code = response.status
        if (200..<300).contains(code) { return .ok(response.body, httpStatus: code) }
        if code == 401 { return .unauthorized }
        let retryAfter = RetryAfter.wait(response.headers.first(name: "Retry-After"), now: Date())
        if let body = try? JSONDecoder().decode(ServerAPIErrorBody.self, from: Data(response.body.readableBytesView)) {
            return .apple(code: body.errorCode, httpStatus: code, retryAfter: retryAfter)
        }
        let failure = VerificationFailure(.httpStatus, "\(environment.rawValue) Server API answered HTTP \(code)", httpStatus: code)
        return code >= 500 || code == 429 ? .transient(failure, retryAfter: retryAfter) : .permanent(failure)
    }
}
