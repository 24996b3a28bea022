import Foundation
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import StatusPolling

/// The contract table (``ContractColumn``) against what each store's migrations actually build,
/// and what the stores derive from it: a column added to one and not the other fails here.
@Suite struct ContractSchemaTests {
    @Test(arguments: StoreKind.available) func bothStoresMigrateExactlyTheTablesColumns(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let columns = try await store.declaredColumns("subscriptions")
            for column in ContractColumn.allCases {
                let declared = try #require(columns[column.rawValue], "\(column.rawValue) is missing from \(kind)'s schema")
                let type = store.sqlitePath != nil ? column.kind.sqliteType : column.kind.postgresType
                #expect(declared["type"] == type, "\(column.rawValue)")
                #expect(declared["required"] == (column.isRequired ? "1" : "0"), "\(column.rawValue)")
            }
        }
    }

    @Test(arguments: StoreKind.available) func everyKindOfValueGoesInAndComesBackOut(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            // Every column set, each to a value no other column holds.
            let full = SubscriptionState(
                originalTransactionID: "1000", productID: "premium.monthly", environment: "Sandbox", expiresAt: 1_700_000_000_001,
                gracePeriodExpiresAt: 1_700_000_000_002, isInBillingRetry: true, autoRenewStatus: false, autoRenewProductID: "premium.yearly",
                expirationIntent: 2, cancelledAt: 1_700_000_000_003, transactionID: "1001", purchasedAt: 1_700_000_000_004,
                ownershipType: "FAMILY_SHARED", billingPlanType: "MONTHLY", commitmentPeriod: 3, commitmentPeriods: 12,
                commitmentExpiresAt: 1_700_000_000_005, renewalBillingPlanType: "BILLED_UPFRONT")
            #expect(full.changedColumns(comparedWith: .unverified) == ContractColumn.allCases)
            for (userID, state) in [("full", full), ("empty", SubscriptionState.unverified)] {
                _ = try await store.insert(userID: userID, receipt: "R-\(userID)", state)
                let read = try #require(try await store.store.subscriptions(userID: userID).first)
                #expect(read.state == state)
            }
            let raw = try #require(try await store.row("SELECT \(ContractColumn.list) FROM subscriptions WHERE user_id = 'full'"))
            #expect(raw["is_in_billing_retry"] == "1")
            #expect(raw["auto_renew_status"] == "0")
            #expect(raw["commitment_expires_at"] == "1700000000005")
            #expect(raw.count == ContractColumn.allCases.count)
        }
    }

    @Test func theAuditSnapshotAndTheStoresJSONFollowTheTable() throws {
        var state = SubscriptionState.unverified
        state.isInBillingRetry = true
        state.autoRenewStatus = false
        state.productID = "a\"b"
        let audit = state.auditJSON
        // Keys sorted; a null column left out (an absent key reads as NULL), a false flag kept.
        #expect(audit == #"{"auto_renew_status":false,"is_in_billing_retry":true,"product_id":"a\"b"}"#)
        let columns = "{" + state.columnsJSON + "}"
        #expect(columns.hasPrefix(#"{"original_transaction_id":null,"product_id":"a\"b","environment":null,"#))
        #expect(columns.contains(#""is_in_billing_retry":1,"auto_renew_status":0,"#))
        // Both read back through Codable to the same state.
        let decoded = try JSONDecoder().decode(SubscriptionState.self, from: Data(audit.utf8))
        #expect(decoded == state)
        #expect(ContractColumn.sortedByName.map(\.rawValue) == ContractColumn.allCases.map(\.rawValue).sorted())
    }
}

extension ContractSchemaTests {
    /// The web service's engineers read docs/DATABASE.md, not the code: every contract column has
    /// its line in the table of columns there.
    @Test func theDatabasePageDescribesEveryColumn() throws {
        let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/DATABASE.md")
        let lines = try String(contentsOf: page, encoding: .utf8).split(separator: "\n")
        let described = Set(lines.filter { $0.hasPrefix("| ") }.flatMap { line in
            line.dropFirst(2).prefix { $0 != "|" }.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        })
        for column in ContractColumn.allCases { #expect(described.contains(column.rawValue), "\(column.rawValue)") }
    }
}
