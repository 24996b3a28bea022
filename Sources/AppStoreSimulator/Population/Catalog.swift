
public enum Catalog {
    static let dayMs: Int64 = 86_400_000
    static let premiumGroup = "20000001"
    static let storageGroup = "20000002"

    public static let monthly = SimulatedProduct(id: "premium.monthly", groupID: premiumGroup, durationMs: 30 * dayMs, level: 2)
    public static let yearly = SimulatedProduct(id: "premium.yearly", groupID: premiumGroup, durationMs: 365 * dayMs, level: 2)
    public static let proMonthly = SimulatedProduct(id: "premium.pro.monthly", groupID: premiumGroup, durationMs: 30 * dayMs, level: 1)
    public static let storageMonthly = SimulatedProduct(id: "storage.monthly", groupID: storageGroup, durationMs: 30 * dayMs, level: 1)
    /// A free trial lasts a week, then converts to the paid product.
    public static let trialMs: Int64 = 7 * dayMs

    static let all = [monthly, yearly, proMonthly, storageMonthly]

    static func product(_ id: String) -> SimulatedProduct {
        all.first { $0.id == id } ?? monthly
    }
}
