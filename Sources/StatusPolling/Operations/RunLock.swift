import EntitlementCore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps two runs (cron overlapping a backfill, a manual run during the nightly one) from polling
/// one database at once: an advisory `flock` on a file beside the database. The kernel releases it
/// when the process ends, however it ends (SIGKILL, power loss), so a dead run never blocks the next.
public final class RunLock: RunLease {
    /// Who holds the lock, written into the lock file for the next run's message.
    public struct Holder: Codable, Sendable, Equatable, CustomStringConvertible {
        public var pid: Int32
        public var host: String
        /// ISO 8601, wall clock.
        public var startedAt: String
        public var command: String

        public init(pid: Int32, host: String, startedAt: String, command: String) {
            self.pid = pid
            self.host = host
            self.startedAt = startedAt
            self.command = command
        }

        /// This process.
        public static func current(command: String) -> Holder {
            Holder(
                pid: ProcessInfo.processInfo.processIdentifier, host: ProcessInfo.processInfo.hostName,
                startedAt: RFC3339Timestamp.text(Int64(Date().timeIntervalSince1970 * 1000), fractionalSeconds: false), command: command)
        }

        public var description: String { "\(command) pid \(pid) on \(host), started \(startedAt)" }
    }

    /// Why the lock could not be taken.
    public enum Failure: Error, CustomStringConvertible, Equatable {
        case held(path: String, by: Holder?)
        case cannotOpen(path: String, reason: String)

        public var description: String {
            switch self {
            case .held(let path, let holder):
                let who = holder.map { "\($0)" } ?? "another process (details not written yet)"
                return "another run holds the lock \(path): \(who). This run did nothing; try again when it ends."
            case .cannotOpen(let path, let reason):
                return "cannot open the lock file \(path): \(reason)."
            }
        }
    }

    public let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// The lock file of the database at `databasePath`.
    public static func path(forDatabase databasePath: String) -> String { databasePath + ".lock" }

    /// Takes the lock without waiting, or throws `Failure.held` naming the holder.
    public static func acquire(path: String, holder: Holder) throws -> RunLock {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure.cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let reason = String(cString: strerror(errno))
            close(fd)
            guard busy else { throw Failure.cannotOpen(path: path, reason: reason) }
            let current = FileManager.default.contents(atPath: path).flatMap { try? JSONDecoder().decode(Holder.self, from: $0) }
            throw Failure.held(path: path, by: current)
        }
        if let data = try? JSONEncoder().encode(holder) {
            _ = ftruncate(fd, 0)
            _ = data.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        }
        return RunLock(path: path, descriptor: fd)
    }

    /// Releases the lock (closing the descriptor releases it too).
    public func release() {
        _ = ftruncate(descriptor, 0)
        _ = flock(descriptor, LOCK_UN)
    }

    deinit { close(descriptor) }
}
