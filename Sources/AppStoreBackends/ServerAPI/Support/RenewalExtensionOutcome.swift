import EntitlementCore

/// Apple's answer to Extend a Subscription Renewal Date.
public enum RenewalExtensionOutcome: Sendable, Equatable {
    /// Extended: the period now ends at `effectiveDateMs`.
    case extended(effectiveDateMs: Int64, webOrderLineItemID: String?, environment: AppStoreEnvironment)
    /// Apple said no, and why.
    case refused(RenewalExtensionRefusal, environment: AppStoreEnvironment)
}
