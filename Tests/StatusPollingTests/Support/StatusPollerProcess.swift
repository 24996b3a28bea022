import Foundation
import PollingDemo

/// The real `status-poller` binary (or `status-poller-demo`) in a child process: launched, signalled, awaited. Output goes
/// to files and the exit is awaited on a pidfd (`ChildProcess`, swift-subprocess), so nothing blocks
/// one of the (two, on these machines) threads of the cooperative pool. Not Foundation's `Process`:
/// on Linux it crashes now and then once the test process holds some 1,350 descriptors.
final class StatusPollerProcess: Sendable {
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The child's process id, for signals.
    let pid: pid_t
    private let directory: URL
    private let outURL: URL
    private let errURL: URL
    private let end: Task<ChildProcess.End, any Error>

    static var binary: URL { built("status-poller") }
    /// The simulator and the demo: a program of their own, beside `status-poller`.
    static var demoBinary: URL { built("status-poller-demo") }

    static func built(_ name: String) -> URL {
        let testBundle = Bundle.main.bundleURL.deletingLastPathComponent()
        for candidate in [Bundle.main.bundleURL, testBundle] {
            let url = candidate.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return URL(fileURLWithPath: ".build/debug/\(name)")
    }

    private init(pid: pid_t, directory: URL, end: Task<ChildProcess.End, any Error>) {
        self.pid = pid
        self.directory = directory
        outURL = directory.appendingPathComponent("stdout")
        errURL = directory.appendingPathComponent("stderr")
        self.end = end
    }

    /// Starts the binary with `arguments`; APPSTORE_SHARED_SECRET, CREDENTIALS_DIRECTORY and the proxy
    /// variables are removed unless given.
    /// `unprivileged` runs it as `nobody` when the tests run as root, so file permissions bite.
    static func launch(_ arguments: [String], binary: URL = binary, environment: [String: String] = [:], unprivileged: Bool = false) async throws -> StatusPollerProcess {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (executable, argv) = unprivileged && getuid() == 0
            ? ("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", binary.path] + arguments)
            : (binary.path, arguments)
        // A proxy of the machine's would stand between the binary and the tests' loopback servers;
        // a test that wants one passes it.
        var env = ProcessInfo.processInfo.environment.filter { !["https_proxy", "http_proxy", "no_proxy"].contains($0.key.lowercased()) }
        env.removeValue(forKey: "APPSTORE_SHARED_SECRET")
        env.removeValue(forKey: "CREDENTIALS_DIRECTORY")
        // The tests' PostgreSQL connections get the same margin in the binary as in process.
        env["PGCONNECT_TIMEOUT"] = env["PGCONNECT_TIMEOUT"] ?? String(Patience.boundSeconds)
        env.merge(environment) { $1 }
        let child = try await ChildProcess.start(
            executable, argv, environment: env,
            stdout: directory.appendingPathComponent("stdout"), stderr: directory.appendingPathComponent("stderr"))
        return StatusPollerProcess(pid: child.pid, directory: directory, end: child.end)
    }

    func signal(_ number: Int32) { kill(pid, number) }

    /// What the process has written to stdout so far.
    var stdoutSoFar: String { (try? String(contentsOf: outURL, encoding: .utf8)) ?? "" }

    /// What the process has written to stderr so far.
    var stderrSoFar: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    /// Waits for the exit and reads what it printed. `status` is the exit code, or the signal's
    /// number when a signal ended it.
    func outcome() async throws -> Outcome {
        let status = try await end.value.code
        defer { try? FileManager.default.removeItem(at: directory) }
        return Outcome(
            status: status,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }
}

/// Polls `condition` every 50 ms until it holds or `timeout` passes (by default only a bug waits
/// that long: see `Patience`).
func eventually(timeout: Duration = Patience.bound, _ condition: () throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try condition()
}

/// Polls an async `condition` every 50 ms until it holds or `timeout` passes (see `Patience`).
func eventually(timeout: Duration = Patience.bound, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
