/// The report's money, read from the ledger (`subscription_transactions`) beside the trail: what
/// was sold, refunded and kept by day and month, what recoveries from billing retry brought, the
/// refund rate by count and by money, monthly recurring revenue at each month's end, and offer
/// starts with their conversion to a paid period.
/// Every amount is in milliunits of one currency and never summed across currencies; a
/// transaction whose price is unknown (verifyReceipt and V1 carry none) is counted as such,
/// never guessed.
public struct RevenueReport: Sendable, Equatable {
    /// One currency's sales and refunds over a day or a month (UTC).
    public struct Totals: Sendable, Equatable {
        public var startMs: Int64
        public var currency: String
        /// Priced transactions bought in the period (a free trial's price is 0).
        public var transactions = 0
        public var grossMilliunits: Int64 = 0
        /// Priced transactions refunded in the period (by refund date), each once.
        public var refunds = 0
        public var refundedMilliunits: Int64 = 0
        /// Recoveries from billing retry in the period with a known price, and what they brought
        /// (part of the gross).
        public var recoveries = 0
        public var recoveredMilliunits: Int64 = 0

        public var netMilliunits: Int64 { grossMilliunits - refundedMilliunits }
        /// Refunds ÷ transactions of the period; nil without a transaction.
        public var refundRateByCount: Double? { transactions > 0 ? Double(refunds) / Double(transactions) : nil }
        /// Refunded ÷ gross of the period; nil without gross.
        public var refundRateByMoney: Double? { grossMilliunits > 0 ? Double(refundedMilliunits) / Double(grossMilliunits) : nil }
    }

    /// Transactions of a day whose price the ledger does not know.
    public struct PriceUnknown: Sendable, Equatable {
        public var dateMs: Int64
        public var sales = 0
        public var refunds = 0
        public var recoveries = 0
    }

    /// One month's (UTC) starts of one offer, and how many a paid period followed.
    public struct OfferCohort: Sendable, Equatable {
        public var monthMs: Int64
        /// Apple's `offerType`: 1 introductory, 2 promotional, 3 offer code, 4 win-back.
        public var offerType: Int
        /// `offerDiscountType`: FREE_TRIAL, PAY_AS_YOU_GO, PAY_UP_FRONT, ONE_TIME; "" unknown.
        public var discountType: String
        public var starts = 0
        public var converted = 0
        public var conversion: Double? { starts > 0 ? Double(converted) / Double(starts) : nil }
    }

    /// Monthly recurring revenue in one currency at a month's last instant (or the report's end).
    public struct MonthlyRecurringRevenue: Sendable, Equatable {
        public var atMs: Int64
        public var currency: String
        /// Paid periods running then.
        public var subscriptions: Int
        public var milliunits: Int64
    }

    /// Monthly recurring revenue's movement in one currency over a month (UTC): from the previous
    /// month's end to this one's (``MRRMovementFold``). Amounts are MRR, milliunits a month.
    public struct MRRMovement: Sendable, Equatable {
        /// Subscriptions and the MRR they moved, a positive amount either way.
        public struct Change: Sendable, Equatable {
            public var subscriptions = 0
            public var milliunits: Int64 = 0

            public init(subscriptions: Int = 0, milliunits: Int64 = 0) {
                self.subscriptions = subscriptions
                self.milliunits = milliunits
            }

            mutating func add(_ amount: Int64) {
                subscriptions += 1
                milliunits += amount
            }
        }

        /// The month's first instant.
        public var monthMs: Int64
        public var currency: String
        /// Paying at this month's end and at no month's end before.
        public var new = Change()
        /// Paying again at this month's end after a month's end without.
        public var reactivation = Change()
        /// Paying more (or less) than at the previous month's end: another plan or price.
        public var expansion = Change()
        public var contraction = Change()
        /// Paying at the previous month's end, not at this one's (expired, refunded, upgraded away to nothing).
        public var churn = Change()

        public init(monthMs: Int64, currency: String) {
            self.monthMs = monthMs
            self.currency = currency
        }

        /// The changes' names in the JSON and CSV, in the page's order.
        public static let changeNames = ["new", "reactivation", "expansion", "contraction", "churn"]

        /// The changes by name, in ``changeNames``' order.
        public var changes: [(String, Change)] { Array(zip(Self.changeNames, [new, reactivation, expansion, contraction, churn])) }

        /// This month's MRR minus the previous month's.
        public var netMilliunits: Int64 {
            new.milliunits + reactivation.milliunits + expansion.milliunits - contraction.milliunits - churn.milliunits
        }
    }

    public var days: [Totals] = []
    public var months: [Totals] = []
    public var priceUnknown: [PriceUnknown] = []
    public var offers: [OfferCohort] = []
    public var monthlyRecurringRevenue: [MonthlyRecurringRevenue] = []
    public var mrrMovement: [MRRMovement] = []

    public init() {}

    /// What the store sums over the ledger, by UTC day numbers, before the report's end and from
    /// the ledger's start: read beside the trail (the report's start is known only once the trail
    /// is read), folded by ``init(_:fromMs:toMs:)``.
    public struct Sums: Sendable, Equatable {
        /// By purchase day, expiry day and currency ("" unknown): transactions, priced, gross;
        /// paying periods (not refunded or upgraded away) and their price over a month; recoveries
        /// from billing retry, those priced, and what they brought.
        public struct Sale: Sendable, Equatable {
            public var day: Int64, expiresDay: Int64, currency: String, count: Int, priced: Int, milliunits: Int64, paying: Int, monthlyMilliunits: Int64
            public var recoveries = 0, pricedRecoveries = 0, recoveredMilliunits: Int64 = 0
        }
        /// By refund day and currency: refunds, priced, refunded.
        public struct Refund: Sendable, Equatable {
            public var day: Int64, currency: String, count: Int, priced: Int, milliunits: Int64
        }
        /// By start day, offer type and discount: starts, converted.
        public struct Offer: Sendable, Equatable {
            public var day: Int64, offerType: Int, discountType: String, starts: Int, converted: Int
        }
        public var sales: [Sale] = []
        public var refunds: [Refund] = []
        public var offers: [Offer] = []
        /// Every month's MRR movement up to the report's end, from the ledger's first period on.
        public var movements: [MRRMovement] = []

        public init(sales: [Sale] = [], refunds: [Refund] = [], offers: [Offer] = [], movements: [MRRMovement] = []) {
            self.sales = sales
            self.refunds = refunds
            self.offers = offers
            self.movements = movements
        }
    }

    /// The report over [`fromMs`, `toMs`) from the ledger's sums: days and months from the days
    /// inside it, MRR at each month's end (``monthEnds(fromMs:toMs:)``, each a day's last
    /// millisecond, so a day's purchases and expiries place a period exactly).
    public init(_ sums: Sums, fromMs: Int64, toMs: Int64) {
        let dayMs = ReportCalendar.dayMs, firstDay = ReportCalendar.startOfDay(fromMs) / dayMs, endDay = toMs / dayMs
        var days: [String: Totals] = [:], months: [String: Totals] = [:], unknown: [Int64: PriceUnknown] = [:]
        func add(_ day: Int64, _ currency: String, into change: (inout Totals) -> Void) {
            let dayStart = day * dayMs, monthStart = ReportCalendar.startOfMonth(dayStart)
            change(&days["\(dayStart) \(currency)", default: Totals(startMs: dayStart, currency: currency)])
            change(&months["\(monthStart) \(currency)", default: Totals(startMs: monthStart, currency: currency)])
        }
        for s in sums.sales where s.day >= firstDay && s.day < endDay {
            if s.count > s.priced || s.recoveries > s.pricedRecoveries {
                unknown[s.day * dayMs, default: PriceUnknown(dateMs: s.day * dayMs)].sales += s.count - s.priced
                unknown[s.day * dayMs]!.recoveries += s.recoveries - s.pricedRecoveries
            }
            guard s.priced > 0, !s.currency.isEmpty else { continue }
            add(s.day, s.currency) {
                $0.transactions += s.priced
                $0.grossMilliunits += s.milliunits
                $0.recoveries += s.pricedRecoveries
                $0.recoveredMilliunits += s.recoveredMilliunits
            }
        }
        for r in sums.refunds where r.day >= firstDay && r.day < endDay {
            if r.count > r.priced { unknown[r.day * dayMs, default: PriceUnknown(dateMs: r.day * dayMs)].refunds += r.count - r.priced }
            guard r.priced > 0, !r.currency.isEmpty else { continue }
            add(r.day, r.currency) { $0.refunds += r.priced; $0.refundedMilliunits += r.milliunits }
        }
        func ordered(_ totals: [String: Totals]) -> [Totals] { totals.values.sorted { ($0.startMs, $0.currency) < ($1.startMs, $1.currency) } }
        self.days = ordered(days)
        self.months = ordered(months)
        priceUnknown = unknown.values.sorted { $0.dateMs < $1.dateMs }
        var cohorts: [String: OfferCohort] = [:]
        for o in sums.offers where o.day >= firstDay && o.day < endDay {
            let month = ReportCalendar.startOfMonth(o.day * dayMs), key = "\(month) \(o.offerType) \(o.discountType)"
            cohorts[key, default: OfferCohort(monthMs: month, offerType: o.offerType, discountType: o.discountType)].starts += o.starts
            cohorts[key]!.converted += o.converted
        }
        offers = cohorts.values.sorted { ($0.monthMs, $0.offerType, $0.discountType) < ($1.monthMs, $1.offerType, $1.discountType) }
        // A period runs at a day's last instant when bought that day or before and expiring after it.
        var mrr: [MonthlyRecurringRevenue] = []
        for end in Self.monthEnds(fromMs: fromMs, toMs: toMs) {
            let day = end / dayMs
            var byCurrency: [String: (subscriptions: Int, milliunits: Int64)] = [:]
            for s in sums.sales where s.paying > 0 && !s.currency.isEmpty && s.day <= day && s.expiresDay > day {
                byCurrency[s.currency, default: (0, 0)].subscriptions += s.paying
                byCurrency[s.currency]!.milliunits += s.monthlyMilliunits
            }
            mrr += byCurrency.sorted { $0.key < $1.key }.map { MonthlyRecurringRevenue(atMs: end, currency: $0.key, subscriptions: $0.value.subscriptions, milliunits: $0.value.milliunits) }
        }
        monthlyRecurringRevenue = mrr
        let firstMonth = ReportCalendar.startOfMonth(fromMs)
        mrrMovement = sums.movements.filter { $0.monthMs >= firstMonth && $0.monthMs < toMs }
    }

    /// The instants monthly recurring revenue is read at: each month's last millisecond from
    /// `fromMs`'s month on, the last one cut at `toMs`.
    public static func monthEnds(fromMs: Int64, toMs: Int64) -> [Int64] {
        var ends: [Int64] = []
        var month = ReportCalendar.startOfMonth(fromMs)
        while month < toMs {
            let next = ReportCalendar.startOfNextMonth(month)
            ends.append(min(next, toMs) - 1)
            month = next
        }
        return ends
    }
}

extension RevenueReport.Sums.Sale {
    /// A row of ``RevenueSQL/sales(toMs:environment:)``.
    init(_ row: inout some ColumnReader) throws {
        self.init(
            day: try row.column(), expiresDay: try row.column(), currency: try row.column(), count: try row.column(), priced: try row.column(),
            milliunits: try row.column(), paying: try row.column(), monthlyMilliunits: try row.column(), recoveries: try row.column(),
            pricedRecoveries: try row.column(), recoveredMilliunits: try row.column())
    }
}

extension RevenueReport.Sums.Refund {
    /// A row of ``RevenueSQL/refunds(toMs:environment:)``.
    init(_ row: inout some ColumnReader) throws {
        self.init(day: try row.column(), currency: try row.column(), count: try row.column(), priced: try row.column(), milliunits: try row.column())
    }
}

extension RevenueReport.Sums.Offer {
    /// A row of ``RevenueSQL/offers(_:toMs:environment:)``.
    init(_ row: inout some ColumnReader) throws {
        self.init(day: try row.column(), offerType: try row.column(), discountType: try row.column(), starts: try row.column(), converted: try row.column())
    }
}
