/// The receiver could not start.
public enum ReceiverServerError: Error, Sendable, CustomStringConvertible {
    case couldNotListen(host: String, port: Int, reason: String)

    public var description: String {
        switch self {
        case .couldNotListen(let host, let port, let reason):
            return "could not listen on \(host):\(port) (\(reason)); is another process using the port, is the address this host's, may this user bind it?"
        }
    }
}
