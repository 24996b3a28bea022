import Foundation
import Subprocess
import SystemPackage

/// Child processes — `demo --workers`' `run` processes, and the tests' binary and tools — through
/// swift-subprocess rather than Foundation's `Process`: on Linux, `Process.run()` lists
/// /proc/self/fd and copies each entry's whole 256-byte name, which reads past glibc's 32 KiB
/// directory buffer once some 1,350 descriptors are open, and the process dies of SIGSEGV now and
/// then (swift-corelibs-foundation#5472). swift-subprocess closes the child's descriptors with
/// close_range and awaits its end on a pidfd, blocking no thread.
public enum ChildProcess {
    /// How a child ended: its exit code, or the signal that ended it.
    public enum End: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        public var description: String {
            switch self {
            case .exited(let code): "exited \(code)"
            case .signalled(let signal): "was killed by signal \(signal)"
            }
        }

        /// The exit code, or the signal's number — what Foundation's `terminationStatus` gave.
        public var code: Int32 {
            switch self {
            case .exited(let code), .signalled(let code): code
            }
        }
    }

    /// A started child: its process id, and its end.
    public struct Started: Sendable {
        public let pid: pid_t
        public let end: Task<End, any Error>
    }

    /// Starts `executable` with stdin empty and stdout and stderr written to two new files (mode
    /// 600: a worker's report and log are the operator's); returns once it runs.
    public static func start(
        _ executable: String, _ arguments: [String], environment: [String: String], stdout: URL, stderr: URL
    ) async throws -> Started {
        let out = try FileDescriptor.open(FilePath(stdout.path), .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite])
        let err: FileDescriptor
        do {
            err = try FileDescriptor.open(FilePath(stderr.path), .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite])
        } catch {
            try? out.close()
            throw error
        }
        let (pids, started) = AsyncThrowingStream<pid_t, any Error>.makeStream()
        let end = Task<End, any Error> {
            do {
                let result = try await Subprocess.run(
                    .path(FilePath(executable)), arguments: Arguments(arguments), environment: .custom(keyed(environment)),
                    input: .none, output: .fileDescriptor(out, closeAfterSpawningProcess: true),
                    error: .fileDescriptor(err, closeAfterSpawningProcess: true)
                ) { execution in
                    started.yield(execution.processIdentifier.value)
                    started.finish()
                }
                return End(result.terminationStatus)
            } catch {
                started.finish(throwing: error)
                throw error
            }
        }
        for try await pid in pids { return Started(pid: pid, end: end) }
        throw CancellationError()
    }

    /// Runs `executable` in `directory` to its end; how it ended and what it wrote to stdout and
    /// stderr together (at most 1 MiB).
    public static func run(
        _ executable: String, _ arguments: [String], in directory: URL, environment: [String: String]
    ) async throws -> (end: End, output: String) {
        let result = try await Subprocess.run(
            .path(FilePath(executable)), arguments: Arguments(arguments), environment: .custom(keyed(environment)),
            workingDirectory: FilePath(directory.path), input: .none,
            output: .string(limit: 1 << 20), error: .combinedWithOutput)
        return (End(result.terminationStatus), result.standardOutput)
    }

    private static func keyed(_ environment: [String: String]) -> [Environment.Key: String] {
        Dictionary(uniqueKeysWithValues: environment.compactMap { key, value in Environment.Key(rawValue: key).map { ($0, value) } })
    }
}

extension ChildProcess.End {
    init(_ status: TerminationStatus) {
        switch status {
        case .exited(let code): self = .exited(code)
        case .signaled(let signal): self = .signalled(signal)
        }
    }
}
