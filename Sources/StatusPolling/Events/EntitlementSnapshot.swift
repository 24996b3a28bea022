import EntitlementCore

/// What a subscription granted on one side of a change, as the event's body says it: the
/// `entitlements` view's words, so a consumer need not know the contract columns.
public struct EntitlementSnapshot: Sendable, Equatable {
    /// The view's `state` (active, grace_period, billing_retry, expired, refunded, unverified).
    public var state: EntitlementState
    public var isEntitled: Bool { state.isEntitled }
    /// Until when access lasts (or lasted): the later of the expiry and the grace period's end;
    /// nil for a refunded or unverified subscription.
    public var entitledUntilMs: Int64?

    public init(_ subscription: SubscriptionState, at nowMs: Int64) {
        state = subscription.entitlement(at: nowMs)
        switch state {
        case .refunded, .unverified: entitledUntilMs = nil
        default:
            switch (subscription.expiresAt, subscription.gracePeriodExpiresAt) {
            case let (expiry?, graceEnd?): entitledUntilMs = max(expiry, graceEnd)
            case let (expiry, graceEnd): entitledUntilMs = expiry ?? graceEnd
            }
        }
    }

    /// The body's object: `{"state":…,"is_entitled":…,"entitled_until_ms":…}`.
    public var json: String {
        var out = ""
        append(to: &out)
        return out
    }

    /// Appends ``json`` to `out` without building it apart.
    func append(to out: inout String) {
        out.append(#"{"state":"#)
        JSONText.append(state.rawValue, to: &out)
        out.append(#","is_entitled":"#)
        out.append(isEntitled ? "true" : "false")
        out.append(#","entitled_until_ms":"#)
        out.append(entitledUntilMs?.description ?? "null")
        out.append("}")
    }
}
