import ArgumentParser

/// `--backend`: which of Apple's APIs answers.
package enum BackendChoice: String, ExpressibleByArgument, CaseIterable {
    case verifyReceipt = "verify-receipt"
    case serverAPI = "server-api"
    /// The Server API where credentials are configured and it can answer; verifyReceipt otherwise.
    case auto
}
