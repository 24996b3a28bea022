import Foundation
import Synchronization

/// Which endpoint a request came to.
public enum SimulatedEnvironment: String, Sendable {
    case production = "Production"
    case sandbox = "Sandbox"
}
