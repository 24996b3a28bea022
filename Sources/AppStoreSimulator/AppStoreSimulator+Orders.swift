import Foundation

extension AppStoreSimulator {
    /// The order id on the receipt Apple e-mailed for `transactionID` (a purchase or a renewal), as
    /// the customer gives it to support; nil for an id the population never issues.
    public func orderID(ofTransaction transactionID: String) -> String? {
        guard let found = population.transaction(id: transactionID),
            let chain = found.subscriber.chains.firstIndex(where: { $0.originalTransactionID == found.chain.originalTransactionID }),
            let transaction = found.chain.transactions.firstIndex(where: { $0.transactionID == transactionID })
        else { return nil }
        return OrderID.make(subscriber: found.subscriber.index, chain: chain, transaction: transaction, seed: population.configuration.seed)
    }

    /// The transaction an order id names, if this app issued it in `environment` by `ms`.
    func orderTransaction(_ orderID: String, environment: SimulatedEnvironment, at ms: Int64)
        -> (subscriber: SimulatedSubscriber, chain: SimulatedChain, transaction: SimulatedChain.Transaction)?
    {
        let population = self.population
        guard let place = OrderID.place(orderID, seed: population.configuration.seed), population.subscribers.indices.contains(place.subscriber) else { return nil }
        let subscriber = population.subscribers[place.subscriber]
        guard subscriber.environment == environment.rawValue, subscriber.chains.indices.contains(place.chain) else { return nil }
        let chain = subscriber.chains[place.chain]
        guard chain.transactions.indices.contains(place.transaction) else { return nil }
        let transaction = chain.transactions[place.transaction]
        return transaction.purchaseMs <= ms ? (subscriber, chain, transaction) : nil
    }
}
