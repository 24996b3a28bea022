import Foundation
import Synchronization

/// The run's bearer token, reused until shortly before it expires, so a night's thousands of
/// requests cost a handful of signatures. The clock is injectable for tests.
public final class BearerToken: Sendable {
    public let credentials: ServerAPICredentials
    /// How long each token lives (at most an hour).
    public let lifetime: Duration
    /// A token with less than this left is replaced, so none expires on the way to Apple.
    public let renewalMargin: Duration
    private let now: @Sendable () -> Date
    private let current = Mutex<(token: String, expires: Date)?>(nil)

    public init(
        _ credentials: ServerAPICredentials, lifetime: Duration = .seconds(1800), renewalMargin: Duration = .seconds(300),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.credentials = credentials
        self.lifetime = min(lifetime, AppStoreServerJWT.maxLifetime)
        self.renewalMargin = renewalMargin
        self.now = now
    }

    /// The `Authorization` value: "Bearer <JWT>".
    public func authorization() throws(BearerTokenError) -> String { "Bearer " + (try token()) }

    /// A token with more than `renewalMargin` left.
    public func token() throws(BearerTokenError) -> String {
        let instant = now()
        return try current.withLock { current throws(BearerTokenError) in
            if let current, current.expires.timeIntervalSince(instant) > Double(renewalMargin.components.seconds) { return current.token }
            let token = try AppStoreServerJWT.make(credentials, issuedAt: instant, lifetime: lifetime)
            let issued = Date(timeIntervalSince1970: instant.timeIntervalSince1970.rounded(.down))
            current = (token, issued.addingTimeInterval(Double(lifetime.components.seconds)))
            return token
        }
    }

    /// Forgets the token, so the next request signs a new one (after a 401 that may be a clock skew).
    public func discard() { current.withLock { $0 = nil } }
}
