/// The consumption answers counted (`consumption list`, the receiver's metrics): requests, sent,
/// on time and late, without consent, refused by Apple, expired, still pending.
public struct ConsumptionCounts: Sendable, Equatable {
    public var requests = 0
    public var sent = 0
    public var onTime = 0
    public var late = 0
    public var noConsent = 0
    public var refused = 0
    public var expired = 0
    public var pending = 0

    public init(_ records: [ConsumptionRequestRecord] = []) {
        for r in records {
            requests += 1
            switch r.state {
            case .sent:
                sent += 1
                if r.answeredOnTime { onTime += 1 } else { late += 1 }
            case .noConsent: noConsent += 1
            case .refused: refused += 1
            case .expired: expired += 1
            case .pending: pending += 1
            }
        }
    }

    /// One line for the text output.
    public var line: String {
        "requests \(requests)  sent \(sent) (on time \(onTime), late \(late))  no consent \(noConsent)  refused \(refused)  expired \(expired)  pending \(pending)"
    }

    /// The counts by name, for JSON and the metrics.
    public var json: [String: Int] {
        ["requests": requests, "sent": sent, "on_time": onTime, "late": late, "no_consent": noConsent, "refused": refused, "expired": expired, "pending": pending]
    }
}
