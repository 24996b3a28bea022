import Foundation
import Logging
import PollerCommandLine
import StatusPolling

/// The event feed's settings: the endpoints from the config file's `event_endpoints` (an object of
/// `"NAME": {"url", "secret_file"}`; the secret may instead be the systemd credential
/// `secret_credential`, by default `webhook-NAME`) and the delivery policy's keys. A secret is
/// never taken from argv.
struct EventSettings {
    var endpoints: [WebhookEndpoint]
    var policy: DeliveryPolicy

    /// The deliverer of these endpoints over `store`, named after this host and process.
    func deliverer(_ store: any PollingStore, client: WebhookClient, logger: Logger, metrics: EventMetrics? = nil) -> EventDeliverer {
        EventDeliverer(
            outbox: store, endpoints: endpoints, policy: policy, owner: "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier)",
            client: client, logger: logger, metrics: metrics)
    }

    /// The deliverer's HTTP, through the egress proxy of the environment for the endpoints its
    /// rules send there, as the App Store clients go.
    func client() throws -> WebhookClient {
        WebhookClient(connectionsPerEndpoint: policy.concurrency, endpoints: endpoints, proxy: try AppStoreSettings.proxy())
    }

    static func load(_ settings: Settings, configPath: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> EventSettings {
        var policy = DeliveryPolicy()
        policy.maximumAge = .seconds(try settings.double(nil, "event_max_age_hours", default: 72) * 3600)
        policy.keepDelivered = .seconds(try settings.double(nil, "event_keep_days", default: 7) * 86_400)
        policy.concurrency = try settings.int(nil, "event_concurrency", default: policy.concurrency)
        policy.requestTimeout = .seconds(try settings.double(nil, "event_request_timeout_seconds", default: 10))
        policy.firstDelay = .seconds(try settings.double(nil, "event_first_retry_seconds", default: 5))
        policy.maximumDelay = .seconds(try settings.double(nil, "event_max_retry_seconds", default: 3600))
        policy.lease = .seconds(try settings.double(nil, "event_lease_seconds", default: 60))
        guard policy.concurrency >= 1, policy.maximumAge > .zero, policy.keepDelivered > .zero, policy.requestTimeout > .zero,
            policy.firstDelay > .zero, policy.maximumDelay >= policy.firstDelay, policy.lease > .zero
        else { throw usageError("event_* settings must be positive (and event_max_retry_seconds at least event_first_retry_seconds).") }
        return EventSettings(endpoints: try endpoints(configPath: configPath ?? environment["STATUS_POLLER_CONFIG"], environment: environment), policy: policy)
    }

    /// Whether the config file names an endpoint, its secrets unread: a run needs to know only
    /// that the outbox has a reader.
    static func hasEndpoints(configPath: String?) -> Bool {
        (endpointList(configPath: configPath) as? [String: Any])?.isEmpty == false
    }

    /// The config file's `event_endpoints`, as it is written; nil without a file or the key.
    private static func endpointList(configPath: String?) -> Any? {
        guard let configPath, let data = FileManager.default.contents(atPath: configPath),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object["event_endpoints"]
    }

    static func endpoints(configPath: String?, environment: [String: String]) throws -> [WebhookEndpoint] {
        guard let configPath, let list = endpointList(configPath: configPath) else { return [] }
        guard let entries = list as? [String: [String: Any]] else {
            throw usageError("event_endpoints in \(configPath) must be an object of \"NAME\": {\"url\": …, \"secret_file\": …}.")
        }
        return try entries.sorted { $0.key < $1.key }.map { name, entry in
            guard let url = entry["url"] as? String else { throw usageError("endpoint \(name) in \(configPath) needs a url.") }
            let text: String
            if let file = entry["secret_file"] as? String {
                guard let data = FileManager.default.contents(atPath: file) else {
                    throw usageError("cannot read the webhook secret file \(file) of endpoint \(name). Check the path and its permissions.")
                }
                text = String(decoding: data, as: UTF8.self)
            } else {
                let credential = entry["secret_credential"] as? String ?? "webhook-\(name)"
                guard let value = SecretSource.credential(credential, environment: environment) else {
                    throw usageError("""
                        endpoint \(name) has no secret: give secret_file, or under systemd LoadCredential=\(credential):FILE \
                        (`status-poller events secret` makes one).
                        """)
                }
                text = value
            }
            do {
                return try WebhookEndpoint(name: name, url: url, secret: try WebhookSecret(text))
            } catch {
                throw usageError("endpoint \(name): \(error).")
            }
        }
    }
}
