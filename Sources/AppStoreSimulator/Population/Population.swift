/// The whole simulated population, generated once from the configuration's seed. A value: answers
/// and truths are read from a copy at any instant, from any number of requests at once; only a
/// renewal-date extension rewrites a chain (``extendRenewal(originalTransactionID:atMs:days:requestIdentifier:)``),
/// as Apple's own record changes then.
public struct Population: Sendable {
    public let configuration: PopulationConfiguration
    public private(set) var subscribers: [SimulatedSubscriber]
    private let indexByUserID: [String: Int]
    /// Each chain's place, by its original transaction id. Renewals' ids extend it (see
    /// `ChainGenerator`), so this small index finds every transaction id without listing them all:
    /// a population of two million keeps one entry per chain.
    private let chainByOriginalTransactionID: [String: ChainPlace]

    struct ChainPlace: Sendable {
        var subscriber: Int
        var chain: Int
    }

    public init(_ configuration: PopulationConfiguration) {
        self.configuration = configuration
        var subscribers: [SimulatedSubscriber] = []
        subscribers.reserveCapacity(configuration.subscribers)
        for index in 0..<configuration.subscribers {
            subscribers.append(Self.generate(index: index, configuration))
        }
        self.subscribers = subscribers
        indexByUserID = Dictionary(uniqueKeysWithValues: subscribers.map { ($0.userID, $0.index) })
        var chains: [String: ChainPlace] = [:]
        for subscriber in subscribers {
            for (index, chain) in subscriber.chains.enumerated() {
                chains[chain.originalTransactionID] = ChainPlace(subscriber: subscriber.index, chain: index)
            }
        }
        chainByOriginalTransactionID = chains
    }

    public func subscriber(userID: String) -> SimulatedSubscriber? {
        indexByUserID[userID].map { subscribers[$0] }
    }

    /// The subscriber, chain and transaction of `transactionID`, which may be any transaction id or
    /// original transaction id the population ever issues (visible at any instant or not).
    public func transaction(id transactionID: String) -> (subscriber: SimulatedSubscriber, chain: SimulatedChain, transaction: SimulatedChain.Transaction)? {
        // The id itself (an original one), else the id less a renewal suffix of 4 or 5 digits.
        for suffix in [0, 4, 5] where transactionID.count > suffix {
            guard let place = chainByOriginalTransactionID[String(transactionID.dropLast(suffix))] else { continue }
            let subscriber = subscribers[place.subscriber]
            let chain = subscriber.chains[place.chain]
            if let transaction = chain.transactions.first(where: { $0.transactionID == transactionID }) {
                return (subscriber, chain, transaction)
            }
        }
        return nil
    }

    /// The subscriber and chain of an original transaction id.
    func place(ofChain originalTransactionID: String) -> (subscriber: Int, chain: Int)? {
        chainByOriginalTransactionID[originalTransactionID].map { ($0.subscriber, $0.chain) }
    }

    /// Rewrites one chain (a renewal-date extension); nil when the id names no chain.
    mutating func modifyChain<R>(_ originalTransactionID: String, _ body: (inout SimulatedChain, SimulatedSubscriber) -> R) -> R? {
        guard let place = chainByOriginalTransactionID[originalTransactionID] else { return nil }
        let subscriber = subscribers[place.subscriber]
        return body(&subscribers[place.subscriber].chains[place.chain], subscriber)
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
        var trial = random.chance(configuration.trialShare)
        var intro = random.chance(configuration.introOfferShare)
        // A Family Sharing member: drawn apart, so every other subscriber's draws stay the same.
        var family = SeededRandom(seed: configuration.seed, UInt64(index), 3)
        let familyShared = family.chance(configuration.familySharedShare)
        if familyShared { (trial, intro) = (false, false) }
        // Apple's ids are numeric strings; sandbox ones come from another range here.
        let idBase: UInt64 = (sandbox ? 200_000_000_000 : 100_000_000_000) + UInt64(index) * 10
        var chains: [SimulatedChain] = []
        var premium = ChainGenerator(
            configuration: configuration, random: SeededRandom(seed: configuration.seed, UInt64(index), 1),
            originalTransactionID: String(idBase), groupID: Catalog.premiumGroup)
        if familyShared { premium.chain.ownershipType = "FAMILY_SHARED" }
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
