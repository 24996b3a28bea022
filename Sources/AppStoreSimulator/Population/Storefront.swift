/// The App Store storefront a chain was bought in, and what each product costs there: Apple's
/// `storefront` (ISO 3166-1 alpha-3), `storefrontId`, `currency` (ISO 4217) and prices in
/// milliunits (Apple's tiers: 9.99 USD is 1,500 JPY). Most chains are American; the rest are spread
/// by the chain's id, a fixed function, so that every answer about a chain agrees and no random
/// draw of the population moves.
public struct Storefront: Sendable, Equatable {
    public let code: String
    public let id: String
    public let currency: String
    /// Full price per product id, milliunits of ``currency``.
    let prices: [String: Int]

    static let usa = Storefront(code: "USA", id: "143441", currency: "USD", prices: prices(9_990, 99_990, 14_990, 2_990))
    static let gbr = Storefront(code: "GBR", id: "143444", currency: "GBP", prices: prices(8_990, 89_990, 13_990, 2_990))
    static let deu = Storefront(code: "DEU", id: "143443", currency: "EUR", prices: prices(9_990, 99_990, 14_990, 2_990))
    static let jpn = Storefront(code: "JPN", id: "143462", currency: "JPY", prices: prices(1_500_000, 15_000_000, 2_200_000, 450_000))
    static let can = Storefront(code: "CAN", id: "143455", currency: "CAD", prices: prices(12_990, 129_990, 19_990, 3_990))

    /// Monthly, yearly, pro monthly, storage monthly.
    private static func prices(_ monthly: Int, _ yearly: Int, _ pro: Int, _ storage: Int) -> [String: Int] {
        [Catalog.monthly.id: monthly, Catalog.yearly.id: yearly, Catalog.proMonthly.id: pro, Catalog.storageMonthly.id: storage]
    }

    /// `chain`'s storefront: six in ten American, one each British, German, Japanese, Canadian.
    public static func of(_ chain: SimulatedChain) -> Storefront {
        switch SimulatedOffer.fingerprint(chain.originalTransactionID) % 10 {
        case 6: gbr
        case 7: deu
        case 8: jpn
        case 9: can
        default: usa
        }
    }

    /// The full price of `productID` here, milliunits.
    public func price(of productID: String) -> Int {
        prices[productID] ?? prices[Catalog.monthly.id]!
    }
}
