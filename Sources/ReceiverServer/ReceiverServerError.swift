/// The receiver could not start.
public enum ReceiverServerError: Error, Sendable, CustomStringConvertible {
    case couldNotListen(host: String, port: Int)

    public var description: String {
        switch self {
        case .couldNotListen(let host, let port):
            return "could not listen on \(host):\(port); is another process using the port, or is the address not this host's?"
        }
    }
}
