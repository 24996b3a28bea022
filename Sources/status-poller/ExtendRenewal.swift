import AppStoreBackends
import ArgumentParser
import EntitlementCore
import Foundation
import PollerCommandLine
import StatusPolling

/// `status-poller extend --original-transaction-id X --days N --reason CODE` (one subscription),
/// or `extend --all --product P --days N --reason CODE` (every active subscriber of a product).
struct ExtendRenewal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "renewal",
        abstract: "Ask Apple to extend renewal dates (the default of `extend`).",
        discussion: """
            One subscription (Extend a Subscription Renewal Date): Apple's signed status is asked right after and \
            written to the row through the same path as a run's answers (newer data wins), with an audit row of \
            source `extended`. Apple refuses a subscription that is not in an active paid period, one extended twice \
            in the past 365 days, a Family Sharing member's, and more than 90 days; the refusal is explained. \
            With --all (Extend Subscription Renewal Dates for All Active Subscribers) the request is kept in the \
            database by its request id (sending it again is safe) and followed by `extend status` and the nightly run. \
            Exit 0 when Apple extended (or took the mass request); 1 when Apple refused; 2 usage; 3 when Apple could \
            not be asked or its answer not trusted.
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var appStore: AppStoreOptions
    @OptionGroup(title: "App Store Server API") var serverAPI: ServerAPIOptions

    @Option(name: .customLong("original-transaction-id"), help: "The subscription to extend.")
    var originalTransactionID: String?

    @Flag(help: "Every active subscriber of --product instead of one subscription.")
    var all = false

    @Option(help: "With --all: the product whose active subscribers are extended.")
    var product: String?

    @Option(help: "With --all: a storefront (ISO 3166-1 alpha-3, e.g. USA); repeatable; default every storefront.")
    var storefront: [String] = []

    @Option(help: "Days to extend by, 1 to 90.")
    var days: Int

    @Option(help: "Apple's reason: service-issue (3), customer-satisfaction (1), other (2) or undeclared (0).")
    var reason: String

    @Option(name: .customLong("request-id"), help: "The request identifier (default: a new UUID); give the same one to send a request again safely.")
    var requestID: String?

    @Option(help: "production or sandbox (default: the row's environment, else production).")
    var environment: String?

    @Option(help: "Output: text or json.")
    var format: ReportFormat = .text

    @Option(help: "The clock for the row's write, ISO 8601 (default: now).")
    var now: String?

    func validate() throws {
        guard all != (originalTransactionID != nil) else { throw ValidationError("give exactly one of --original-transaction-id and --all.") }
        if all, product?.isEmpty ?? true { throw ValidationError("--all needs --product, the product whose active subscribers Apple extends.") }
        if !all, product != nil || !storefront.isEmpty { throw ValidationError("--product and --storefront go with --all.") }
        guard RenewalExtensionRequest.days.contains(days) else { throw ValidationError("--days must be 1 to 90 (Apple's limit), got \(days).") }
        guard RenewalExtensionRequest.Reason(name: reason) != nil else {
            throw ValidationError("--reason must be service-issue, customer-satisfaction, other or undeclared (or 0 to 3), got '\(reason)'.")
        }
        if let requestID, requestID.isEmpty || requestID.count > 128 { throw ValidationError("--request-id must be 1 to 128 characters.") }
        if all, let requestID, UUID(uuidString: requestID) == nil { throw ValidationError("--request-id of a mass extension must be a UUID, as Apple requires.") }
        if let environment, !["production", "sandbox"].contains(environment) { throw ValidationError("--environment must be production or sandbox.") }
        for code in storefront where !(code.count == 3 && code.allSatisfy { $0.isASCII && $0.isUppercase }) {
            throw ValidationError("--storefront takes ISO 3166-1 alpha-3 codes like USA or CAN, got '\(code)'.")
        }
        if let now, ISO8601.parse(now) == nil { throw ValidationError("--now must be ISO 8601 like 2026-11-22T03:00:00Z, got '\(now)'.") }
    }

    var request: RenewalExtensionRequest {
        RenewalExtensionRequest(days: days, reason: RenewalExtensionRequest.Reason(name: reason)!, requestIdentifier: requestID ?? UUID().uuidString.lowercased())
    }

    var chosenEnvironment: AppStoreEnvironment? { environment.map { $0 == "sandbox" ? .sandbox : .production } }

    func run() async throws {
        if all { return try await runMass() }
        let request = self.request
        let nowMs = ISO8601.milliseconds(now)
        let id = originalTransactionID!
        let (outcome, applied, row) = try await SupportSession.run(
            store: storeOptions, appStore: appStore, serverAPI: serverAPI, endpointRate: 20, purpose: "a renewal date is extended"
        ) { session -> (RenewalExtensionOutcome, SupportDesk.ExtensionApplied?, SubscriptionRow?) in
            let row = try await session.desk.chain(id, historyLimit: 0).row
            let first = chosenEnvironment ?? row?.state.environment.flatMap(AppStoreEnvironment.init(rawValue:)) ?? .production
            var outcome = try await session.client.extendRenewalDate(originalTransactionID: id, request, in: first, logger: session.logger)
            if case .refused(.unknownSubscription, _) = outcome, chosenEnvironment == nil, row == nil {
                outcome = try await session.client.extendRenewalDate(
                    originalTransactionID: id, request, in: first == .production ? .sandbox : .production, logger: session.logger)
            }
            guard case .extended = outcome, let row else { return (outcome, nil, row) }
            let applied = try await session.desk.applyExtension(to: row, source: session.client, requestIdentifier: request.requestIdentifier, nowMs: nowMs, logger: session.logger)
            return (outcome, applied, row)
        }
        let lines = outcome.display(id, request, applied: applied, row: row)
        if format == .json {
            print(lines.json)
        } else {
            for line in lines.text { print(line) }
        }
        if case .refused = outcome { throw ExitCode(1) }
    }

    /// `extend --all`: recorded, sent unless Apple took it already, then followed by `extend status`.
    func runMass() async throws {
        let request = self.request
        let nowMs = ISO8601.milliseconds(now)
        let record = MassExtensionRequest(
            requestIdentifier: request.requestIdentifier, productID: product!, days: request.days, reasonCode: request.reason.rawValue,
            storefrontCountryCodes: storefront.isEmpty ? nil : storefront, environment: (chosenEnvironment ?? .production).rawValue, requestedAtMs: nowMs)
        // Apple allows one such request a second.
        let outcome = try await SupportSession.run(
            store: storeOptions, appStore: appStore, serverAPI: serverAPI, endpointRate: 1, purpose: "renewal dates are extended"
        ) { session in
            try await session.desk.requestMassExtension(record, client: session.client, nowMs: nowMs, logger: session.logger)
        }
        let line: String
        var failed = false
        switch outcome {
        case .taken(let taken):
            line = "Apple took mass extension \(taken.requestIdentifier): \(taken.productID) +\(taken.days) day(s) for every active subscriber"
                + (taken.storefrontCountryCodes.map { " in \($0.joined(separator: ", "))" } ?? "") + " (\(taken.environment)). "
                + "Apple works through it for hours; follow it with: status-poller extend status"
        case .alreadyTaken(let taken):
            line = "Apple took mass extension \(taken.requestIdentifier) at \(Display.optionalTime(taken.acceptedAtMs)) already; nothing sent. Follow it with: status-poller extend status"
        case .refused(let refusal, let refused):
            failed = true
            line = "Apple refused mass extension \(refused.requestIdentifier) (error \(refusal.rawValue)): \(refusal.explanation)."
        case .conflicting(let stored):
            throw usageError("request id \(stored.requestIdentifier) is recorded for \(stored.productID) +\(stored.days) day(s), reason \(stored.reasonCode), \(stored.environment); give a new --request-id for other terms.")
        }
        print(line)
        if failed { throw ExitCode(1) }
    }
}
