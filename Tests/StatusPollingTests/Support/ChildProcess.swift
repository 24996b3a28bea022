import Foundation
import Subprocess
import SystemPackage

/// Child processes for the tests, through swift-subprocess rather than Foundation's `Process`:
/// on Linux, `Process.run()` lists /proc/self/fd and copies each entry's whole 256-byte name, which
/// reads past glibc's 32 KiB directory buffer once some 1,350 descriptors are open — the parallel
/// suite reaches 1,500 — and crashed the test process with SIGSEGV now and then
/// (swift-corelibs-foundation#5472). swift-subprocess closes the child's descriptors with close_range.
enum ChildProcess {
    /// A started child: its process id, and its end — the exit code, or the signal's number when a
    /// signal ended it.
    struct Started: Sendable {
        let pid: pid_t
        let exited: Task<Int32, any Error>
    }

    /// Starts `executable` with stdin empty and stdout and stderr written to the two files; returns
    /// once it runs.
    static func start(
        _ executable: String, _ arguments: [String], environment: [String: String],
        workingDirectory: URL? = nil, stdout: URL, stderr: URL
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
        let exited = Task<Int32, any Error> {
            do {
                let result = try await Subprocess.run(
                    .path(FilePath(executable)), arguments: Arguments(arguments), environment: .custom(keyed(environment)),
                    workingDirectory: workingDirectory.map { FilePath($0.path) }, input: .none,
                    output: .fileDescriptor(out, closeAfterSpawningProcess: true),
                    error: .fileDescriptor(err, closeAfterSpawningProcess: true)
                ) { execution in
                    started.yield(execution.processIdentifier.value)
                    started.finish()
                }
                return code(result.terminationStatus)
            } catch {
                started.finish(throwing: error)
                throw error
            }
        }
        for try await pid in pids { return Started(pid: pid, exited: exited) }
        throw CancellationError()
    }

    /// Runs `executable` to its end; its exit code and what it wrote to stdout and stderr together.
    static func run(
        _ executable: String, _ arguments: [String], in directory: URL, environment: [String: String]
    ) async throws -> (status: Int32, output: String) {
        let result = try await Subprocess.run(
            .path(FilePath(executable)), arguments: Arguments(arguments), environment: .custom(keyed(environment)),
            workingDirectory: FilePath(directory.path), input: .none,
            output: .string(limit: 1 << 20), error: .combinedWithOutput)
        return (code(result.terminationStatus), result.standardOutput ?? "")
    }

    /// The exit code, or the signal's number — what Foundation's `terminationStatus` gave.
    static func code(_ status: TerminationStatus) -> Int32 {
        switch status {
        case .exited(let code), .signaled(let code): code
        }
    }

    private static func keyed(_ environment: [String: String]) -> [Environment.Key: String] {
        Dictionary(uniqueKeysWithValues: environment.compactMap { key, value in Environment.Key(rawValue: key).map { ($0, value) } })
    }
}
