import Synchronization

/// The last receipts written, by version: a subscriber's receipt only changes when a transaction
/// becomes visible, yet answers, the truth and the demo's check ask for it at every instant. Two
/// versions are kept (now, and a row's last verification), so a population of millions holds at
/// most two receipts per subscriber. Safe from any number of requests at once.
final class ReceiptCache: Sendable {
    private let recent = Mutex<[(version: Int, receipt: String)]>([])

    /// The receipt of `version`, made by `make` unless it is one of the last two.
    func receipt(version: Int, _ make: () -> String) -> String {
        if let known = recent.withLock({ entries in entries.first { $0.version == version }?.receipt }) { return known }
        let made = make()
        recent.withLock { entries in
            entries.removeAll { $0.version == version }
            entries.append((version, made))
            if entries.count > 2 { entries.removeFirst() }
        }
        return made
    }
}
