/// The whole simulated population, generated once from the configuration's seed. Immutable:
/// answers and truths are read from it at any instant, from any number of requests at once.
public struct Population: Sendable {
    public let configuration: PopulationConfiguration
    public let subscribers: [SimulatedSubscriber]
    private let indexByUserID: [String: Int]

    public init(_ configuration: PopulationConfiguration) {
        self.configuration = configuration
        var subscribers: [SimulatedSubscriber] = []
        subscribers.reserveCapacity(configuration.subscribers)
        for index in 0..<configuration.subscribers {
            subscribers.append(Self.generate(index: index, configuration))
        }
        self.subscribers = subscribers
        indexByUserID = Dictionary(uniqueKeysWithValues: subscribers.map { ($0.userID, $0.index) })
    }

    public func subscriber(userID: String) -> SimulatedSubscriber? {
        indexByUserID[userID].map { subscribers[$0] }
    }

    private static func generate(index: Int, _ configuration: PopulationConfiguration) -> SimulatedSubscriber {
        var random = SeededRandom(seed: configuration.seed, UInt64(index))
        let sandbox = random.chance(configuration.sandboxShare)
        let day = Catalog.dayMs
        let product: SimulatedProduct
        let draw = Double.random(in: 0..<1, using: &random)
        if draw < configuration.yearlyShare {
            product = Catalog.yearly
        } else if draw < configuration.yearlyShare + configuration.proShare {
            product = Catalog.proMonthly
        } else {
            product = Catalog.monthly
        }
        // First purchases spread over the period before the start, so every phase of the cycle
        // (just renewed, near expiry, in billing retry, lapsed) is present on the first night.
        let spread = product == Catalog.yearly ? 365 * day : 45 * day
        let firstPurchase = configuration.startMs - random.time(in: day...spread)
        let trial = random.chance(configuration.trialShare)
        let intro = random.chance(configuration.introOfferShare)
        // Apple's ids are numeric strings; sandbox ones come from another range here.
        let idBase: UInt64 = (sandbox ? 200_000_000_000 : 100_000_000_000) + UInt64(index) * 10
        var chains: [SimulatedChain] = []
        var premium = ChainGenerator(
            configuration: configuration, random: SeededRandom(seed: configuration.seed, UInt64(index), 1),
            originalTransactionID: String(idBase), groupID: Catalog.premiumGroup)
        chains.append(premium.generate(product: product, firstPurchaseMs: firstPurchase, trial: trial, introOffer: intro))
        if random.chance(configuration.secondGroupShare) {
            var storage = ChainGenerator(
                configuration: configuration, random: SeededRandom(seed: configuration.seed, UInt64(index), 2),
                originalTransactionID: String(idBase + 1), groupID: Catalog.storageGroup)
            let bought = configuration.startMs - random.time(in: day...(40 * day))
            chains.append(storage.generate(product: Catalog.storageMonthly, firstPurchaseMs: bought, trial: false, introOffer: false))
        }
        return SimulatedSubscriber(
            index: index, userID: "sim-user-\(index + 1)", environment: sandbox ? "Sandbox" : "Production",
            bundleID: configuration.bundleID, chains: chains)
    }
}
