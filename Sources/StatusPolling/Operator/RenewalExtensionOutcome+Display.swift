import AppStoreBackends
import EntitlementCore
import Foundation

/// What `extend` prints of one extension: Apple's answer and what came of it on the row owning
/// the chain, as lines of text and as JSON.
extension RenewalExtensionOutcome {
    package func display(
        _ id: String, _ request: RenewalExtensionRequest, applied: SupportDesk.ExtensionApplied?, row: SubscriptionRow?
    ) -> (text: [String], json: String) {
        var json: [String: Any] = ["original_transaction_id": id, "request_id": request.requestIdentifier, "days": request.days, "reason": request.reason.rawValue]
        var text: [String] = []
        switch self {
        case .refused(let refusal, let environment):
            json["extended"] = false
            json["apple_error"] = refusal.rawValue
            json["environment"] = environment.rawValue
            text.append("Apple refused to extend \(id) (\(environment.rawValue), error \(refusal.rawValue)): \(refusal.explanation).")
            return (text, Self.jsonText(json))
        case .extended(let effective, _, let environment):
            json["extended"] = true
            json["effective_date"] = Display.time(effective)
            json["environment"] = environment.rawValue
            text.append("Apple extended \(id) by \(request.days) day(s) (\(environment.rawValue), request \(request.requestIdentifier)): the period now ends \(Display.time(effective)).")
        }
        json["subscription_id"] = row?.id
        switch applied {
        case nil:
            text.append("No row here owns \(id): nothing to write; a row enrolled later gets the new date from its first verification.")
        case .written(let transition, let expires)?:
            json["row"] = "written"
            json["expires_at"] = expires.map(Display.time)
            text.append("Subscription \(row!.id) (user \(row!.userID)): Apple's signed status written (\(transition?.rawValue ?? "unchanged")); expires_at \(Display.optionalTime(expires)).")
        case .notWritten(let why)?:
            json["row"] = "not_written"
            text.append("Subscription \(row!.id): not written (\(why)); the next run asks Apple again.")
        case .failed(let failure)?:
            json["row"] = "failed"
            text.append("Subscription \(row!.id): Apple's status could not be had or trusted (\(failure.detail)); the extension stands at Apple, and the next run writes it.")
        }
        return (text, Self.jsonText(json))
    }

    private static func jsonText(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
