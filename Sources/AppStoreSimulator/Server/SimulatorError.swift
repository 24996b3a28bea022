import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// Problems starting the simulator.
public enum SimulatorError: Error, CustomStringConvertible {
    case couldNotBind(host: String, port: Int)

    public var description: String {
        switch self {
        case .couldNotBind(let host, let port): return "the simulator could not listen on \(host):\(port); is the port in use?"
        }
    }
}
