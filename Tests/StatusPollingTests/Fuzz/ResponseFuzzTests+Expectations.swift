import AppStoreSimulator
import Foundation
import GRDB
import Logging
import NIOCore
import Testing

@testable import AppStoreBackends
@testable import EntitlementCore
@testable import SQLiteStore
@testable import StatusPolling

// MARK: - What an answer must become, and what it became

extension ResponseFuzzTests {
    /// The kinds of bad answer, and how many of each are read in process.
    enum Category: String, CaseIterable, Sendable {
        case truncated, wrongType, missingOrNullArray, hugeBody, deepNesting, nonNumericString, otherDateForm
        case duplicateKey, nanLike, utf8Oddity, fixtureMutation

        var inProcessCount: Int {
            switch self {
            case .truncated: 1_000
            case .wrongType: 1_500
            case .missingOrNullArray: 600
            case .hugeBody: 40
            case .deepNesting: 610
            case .nonNumericString: 1_000
            case .otherDateForm: 700
            case .duplicateKey: 900
            case .nanLike: 900
            case .utf8Oddity: 1_250
            case .fixtureMutation: 1_500
            }
        }

        /// Separates the categories' random streams.
        var stream: UInt64 { UInt64(Self.allCases.firstIndex(of: self)!) + 1 }
    }

    /// What the client must make of an answer, decided by the generator.
    enum Expected: Sendable, Equatable {
        /// Refused as not JSON, a failure that may pass.
        case notJSON
        /// Refused as JSON of another shape, a failure that stays.
        case unexpectedResponse
        /// Read, and decided exactly as this well-formed body is decided for the same row.
        case like([UInt8])
        /// Read, and refused by the decision for this reason.
        case rejected(VerificationFailure.Reason)
    }

    /// How the client, then the decision, took one answer.
    enum Reading: Equatable, Sendable {
        case failed(VerificationFailure.Reason, transient: Bool)
        case appleStatus(Int, isRetryable: Bool?)
        case decided(EntitlementDecision.Outcome)

        var label: String {
            switch self {
            case .failed(let reason, _): reason.rawValue
            case .appleStatus(let code, _): "apple_status:\(code)"
            case .decided(.adopt): "adopt"
            case .decided(.reject(let failure)): "reject:\(failure.reason.rawValue)"
            }
        }

        var isFailure: Bool { if case .failed = self { true } else { false } }
        var reason: VerificationFailure.Reason? { if case .failed(let reason, _) = self { reason } else { nil } }
    }

    /// One generated answer, the row it is asked for, and what must come of it.
    struct Case {
        var baseName: String
        var row: SubscriptionRow
        var body: [UInt8]
        var expected: Expected
        var note: String
    }

    /// The state and receipt an adoption writes.
    static func adoption(_ outcome: EntitlementDecision.Outcome) -> (state: SubscriptionState, latestReceipt: String?)? {
        guard case .adopt(let state, let receipt, _, _) = outcome else { return nil }
        return (state, receipt)
    }

    /// Decodes and classifies `body` as the client does with a 200, then decides on it.
    static func read(_ body: [UInt8], row: SubscriptionRow) -> Reading {
        switch VerifyReceiptClient.decode(ByteBuffer(bytes: body), environment: .production, httpStatus: 200) {
        case .transient(let failure, _): return .failed(failure.reason, transient: true)
        case .permanent(let failure): return .failed(failure.reason, transient: false)
        case .answer(let response):
            guard response.status.carriesReceipt else { return .appleStatus(response.status.rawValue, isRetryable: response.isRetryable) }
            return .decided(EntitlementDecision.decide(answer: response.statusAnswer, row: row, bundleID: AppleJSON.bundleID))
        }
    }

    /// The label the expectation stands for, and what is wrong with `reading`, if anything.
    static func check(_ reading: Reading, against expected: Expected, row: SubscriptionRow) -> (label: String, problem: String?) {
        if case .decided(let outcome) = reading, let state = adoption(outcome)?.state, state.originalTransactionID?.isEmpty != false || state.expiresAt == nil {
            return ("adopt", "adopted a state without a chain or an expiry: \(state)")
        }
        switch expected {
        case .notJSON:
            return ("not_json", reading == .failed(.notJSON, transient: true) ? nil : "expected not_json, got \(reading)")
        case .unexpectedResponse:
            return ("unexpected_response", reading == .failed(.unexpectedResponse, transient: false) ? nil : "expected unexpected_response, got \(reading)")
        case .rejected(let reason):
            let label = "reject:\(reason.rawValue)"
            return (label, reading.label == label ? nil : "expected \(label), got \(reading)")
        case .like(let reference):
            let wanted = read(reference, row: row)
            if wanted.isFailure { return (wanted.label, "the reference body is refused (\(wanted)): \(String(decoding: reference.prefix(300), as: UTF8.self))") }
            return (wanted.label, reading == wanted ? nil : "expected \(wanted), got \(reading)")
        }
    }
}
