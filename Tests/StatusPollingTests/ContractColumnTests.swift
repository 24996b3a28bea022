import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The one state diff that `show`, `history` and the truth check share.
@Suite struct ContractColumnTests {
    @Test func changedColumnsAreListedInSchemaOrderWithTheirValues() {
        let old = SubscriptionState(originalTransactionID: "1", productID: "premium.monthly", expiresAt: 1_000, isInBillingRetry: true, autoRenewStatus: true)
        var new = old
        new.expiresAt = 2_000
        new.isInBillingRetry = false
        new.expirationIntent = 2
        #expect(old.changedColumns(comparedWith: new) == [.expiresAt, .isInBillingRetry, .expirationIntent])
        #expect(old.changedColumns(comparedWith: old) == [])
        #expect(ContractColumn.allCases.map(\.rawValue) == SubscriptionState.CodingKeys.allCases.map(\.rawValue))
        #expect(ContractColumn.expirationIntent.value(in: old).text() == "NULL")
        #expect(ContractColumn.isInBillingRetry.value(in: old).text(flag: { $0 ? "1" : "0" }) == "1")
        #expect(ContractColumn.autoRenewStatus.value(in: old).text() == "true")
        #expect(ContractColumn.expiresAt.value(in: new).text(time: { "t\($0)" }) == "t2000")
    }
}
