import AppStoreBackends
import Foundation
import PollerCommandLine
import StatusPolling

/// The consumption answers' policy from the config file (docs/CONSUMPTION.md):
/// `consumption_sample_content_provided` (true/false), `consumption_refund_rules` (named rules,
/// the first in name order that matches wins), and the sender's pacing keys.
enum ConsumptionSettings {
    static func policy(_ settings: Settings, configPath: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ConsumptionPolicy {
        var policy = ConsumptionPolicy()
        policy.sampleContentProvided = try settings.onOff(nil, "consumption_sample_content_provided", default: .off) == .on
        policy.claimLease = .seconds(try settings.double(nil, "consumption_claim_seconds", default: 120))
        policy.firstRetry = .seconds(try settings.double(nil, "consumption_first_retry_seconds", default: 30))
        policy.maximumRetry = .seconds(try settings.double(nil, "consumption_max_retry_seconds", default: 1800))
        policy.consentRecheck = .seconds(try settings.double(nil, "consumption_consent_recheck_seconds", default: 300))
        guard policy.claimLease > .zero, policy.firstRetry > .zero, policy.maximumRetry >= policy.firstRetry, policy.consentRecheck > .zero else {
            throw usageError("consumption_*_seconds settings must be positive (and consumption_max_retry_seconds at least consumption_first_retry_seconds).")
        }
        policy.rules = try rules(configPath: configPath ?? environment["STATUS_POLLER_CONFIG"])
        return policy
    }

    /// `consumption_refund_rules` from the config file — an object of named rules, tried in the
    /// order of their names (the config file's reader takes objects, not arrays of them); none
    /// without one.
    static func rules(configPath: String?) throws -> [RefundPreferenceRule] {
        guard let configPath, let data = FileManager.default.contents(atPath: configPath),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let list = object["consumption_refund_rules"]
        else { return [] }
        guard let entries = list as? [String: [String: Any]] else {
            throw usageError("consumption_refund_rules in \(configPath) must be an object of named rules such as {\"1-used\": {\"prefer\": \"DECLINE\", \"period_used\": true}}.")
        }
        do {
            return try entries.sorted { $0.key < $1.key }.map { try RefundPreferenceRule(json: $0.value) }
        } catch let error as ConsumptionPolicyError {
            throw usageError("\(configPath): \(error)")
        }
    }

    /// The Server API client's configuration for the receiver's sender, from the config file and
    /// the environment only (`notifications serve` has no Server API flags); nil without credentials.
    static func serverAPI(_ settings: Settings, bundleID: String, trustedRootFiles: [String]) throws -> (configuration: ServerAPIConfiguration, http: KeepAliveHTTPClient.Configuration)? {
        let appStore = try AppStoreOptions.parse(["--bundle-id", bundleID]).resolve(settings)
        let serverAPI = try ServerAPIOptions.parse(trustedRootFiles.flatMap { ["--trusted-root-file", $0] }).resolve(settings, allowInsecureHTTP: appStore.allowInsecureHTTP)
        guard serverAPI.hasCredentials else { return nil }
        var configuration = try serverAPI.notificationsConfiguration(appStore: appStore, purpose: "consumption requests are answered")
        configuration.ratePerSecond = min(serverAPI.rate, 50)
        return (configuration, appStore.httpConfiguration)
    }
}
