import Dispatch
import Foundation
import Logging

/// SIGTERM (systemd, `kill`) and SIGINT (Ctrl-C) ask the run to stop: it starts no new row, gives
/// requests in flight a few seconds, writes what it has, releases the lock and exits 4.
public enum SignalHandling {
    public static func install(stop: StopSignal, logger: Logger) -> Installed {
        let sources = [SIGTERM, SIGINT].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                logger.notice("stop requested", metadata: ["signal": "\(number == SIGTERM ? "SIGTERM" : "SIGINT")"])
                stop.request()
            }
            source.resume()
            return source
        }
        return Installed(sources: sources)
    }

    /// The installed handlers; `cancel()` restores the default behaviour.
    public struct Installed {
        let sources: [any DispatchSourceSignal]
        public func cancel() {
            for source in sources { source.cancel() }
            signal(SIGTERM, SIG_DFL)
            signal(SIGINT, SIG_DFL)
        }
    }
}
