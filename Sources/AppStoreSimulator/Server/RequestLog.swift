import Foundation
import Synchronization

/// One JSON line per verifyReceipt request, for a harness that must know who asked about which
/// subscriber, and when: `Scripts/worker-kill-test.sh` counts two worker processes asking about
/// one subscription at once. A line holds the handler's start and end on the wall clock (µs since
/// 1970; the end is when the answer goes back, after the simulated latency), the `client` query
/// parameter of the URL the poller was given (each harness process sends its own), the
/// environment, the subscriber and receipt version the receipt names, the HTTP status and the
/// outcome. Never a receipt or a shared secret: a line is written from the receipt's identity only.
public final class RequestLog: Sendable {
    private let file: Mutex<FileHandle>

    /// Creates (or empties) the file at `path`.
    public init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        file = Mutex(handle)
    }

    /// Microseconds since 1970, now.
    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1_000_000).rounded()) }

    /// Appends the line of one request whose handler started at `startMicros` and ends now. Lines
    /// are written whole, in the order the answers go back, so a reader may follow the file.
    func record(startMicros: Int64, client: String?, environment: SimulatedEnvironment, body: Data, answer: SimulatedAnswer, simulator: AppStoreSimulator) {
        var line: [String: Any] = [
            "start_us": startMicros, "end_us": Self.now(), "environment": environment.rawValue, "outcome": answer.outcome, "http_status": answer.httpStatus,
        ]
        if let client { line["client"] = client }
        if let token = Self.token(in: body) {
            line["receipt_version"] = token.version
            if simulator.population.subscribers.indices.contains(token.subscriberIndex) {
                line["user_id"] = simulator.population.subscribers[token.subscriberIndex].userID
            }
        }
        guard var data = try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) else { return }
        data.append(UInt8(ascii: "\n"))
        file.withLock { handle in try? handle.write(contentsOf: data) }
    }

    /// The identity of the receipt in a verifyReceipt body, if it names one of this simulator's.
    static func token(in body: Data) -> ReceiptToken? {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any], let receipt = object["receipt-data"] as? String else { return nil }
        return ReceiptToken(encoded: receipt)
    }
}
