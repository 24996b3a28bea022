import EntitlementCore

extension VerificationFailure {
    /// A request that got no answer, as a failure: a timeout or a broken connection may pass (so
    /// `isTransient`), an answer over the size limit will not. Every backend classifies alike.
    static func transport(_ error: any Error, environment: AppStoreEnvironment) -> VerificationFailure {
        switch error as? HTTPExchangeError {
        case .timedOut?:
            return VerificationFailure(.timeout, "\(environment.rawValue) did not answer in time", isTransient: true)
        case .responseTooLarge?:
            return VerificationFailure(.unexpectedResponse, "\(environment.rawValue) answered with a body over the size limit")
        case let failure?:
            return VerificationFailure(.transport, "\(environment.rawValue) connection failed: \(failure)", isTransient: true)
        case nil:
            return VerificationFailure(.transport, "\(environment.rawValue) connection failed: \(String(describing: error).prefix(200))", isTransient: true)
        }
    }
}
