import ArgumentParser
import Foundation
import PollerCommandLine
import StatusPolling

extension StatusPoller {
    /// `status-poller enroll`: insert a subscriber by hand, as the web service would.
    struct Enroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enrol a subscriber: a user id and a base64 receipt (from a file, or stdin with --receipt-file -).",
            discussion: "The next `run` verifies the new row (it is never verified yet). The receipt is not printed.")

        @OptionGroup var storeOptions: StoreOptions

        @Option(name: .customLong("user-id"), help: "The web service's user id.")
        var userID: String

        @Option(help: "File holding the base64 receipt; - reads stdin.")
        var receiptFile: String

        func run() async throws {
            let data = receiptFile == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileHandle(forReadingAtPath: receiptFile)?.readDataToEndOfFile()
            guard let data else { throw usageError("cannot read the receipt file \(receiptFile).") }
            let receipt = String(decoding: data, as: UTF8.self).filter { !$0.isWhitespace }
            guard !receipt.isEmpty, Data(base64Encoded: receipt) != nil else {
                throw usageError("the receipt must be the app receipt in base64 (as the app sends it); \(receiptFile) holds something else.")
            }
            guard !userID.isEmpty else { throw usageError("--user-id cannot be empty.") }
            try await storeOptions.withStore(try await storeOptions.settings()) { (store: any SubscriberDirectory, database) in
                let id = try await store.enroll(userID: userID, receipt: receipt)
                print("enrolled user \(userID) as subscription \(id); the next run verifies it")
            }
        }
    }
}
