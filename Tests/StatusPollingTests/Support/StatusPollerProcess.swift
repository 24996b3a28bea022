import Foundation

/// The real `status-poller` binary in a child process: launched, signalled, awaited. Output goes
/// to files and the exit is awaited through a termination handler, so nothing blocks one of the
/// (two, on these machines) threads of the cooperative pool.
final class StatusPollerProcess: @unchecked Sendable {
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    let process: Process
    private let directory: URL
    private let outURL: URL
    private let errURL: URL
    private let exited: Task<Int32, Never>

    static var binary: URL {
        let testBundle = Bundle.main.bundleURL.deletingLastPathComponent()
        for candidate in [Bundle.main.bundleURL, testBundle] {
            let url = candidate.appendingPathComponent("status-poller")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return URL(fileURLWithPath: ".build/debug/status-poller")
    }

    private init(process: Process, directory: URL, exited: Task<Int32, Never>) {
        self.process = process
        self.directory = directory
        outURL = directory.appendingPathComponent("stdout")
        errURL = directory.appendingPathComponent("stderr")
        self.exited = exited
    }

    /// Starts the binary with `arguments`; APPSTORE_SHARED_SECRET, CREDENTIALS_DIRECTORY and the proxy
    /// variables are removed unless given.
    /// `unprivileged` runs it as `nobody` when the tests run as root, so file permissions bite.
    static func launch(_ arguments: [String], environment: [String: String] = [:], unprivileged: Bool = false) throws -> StatusPollerProcess {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sp-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let process = Process()
        if unprivileged, getuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", binary.path] + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
        // A proxy of the machine's would stand between the binary and the tests' loopback servers;
        // a test that wants one passes it.
        var env = ProcessInfo.processInfo.environment.filter { !["https_proxy", "http_proxy", "no_proxy"].contains($0.key.lowercased()) }
        env.removeValue(forKey: "APPSTORE_SHARED_SECRET")
        env.removeValue(forKey: "CREDENTIALS_DIRECTORY")
        env.merge(environment) { $1 }
        process.environment = env
        let out = directory.appendingPathComponent("stdout")
        let err = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { continuation.yield($0.terminationStatus); continuation.finish() }
        try process.run()
        let exited = Task { for await status in stream { return status }; return -1 }
        return StatusPollerProcess(process: process, directory: directory, exited: exited)
    }

    var pid: Int32 { process.processIdentifier }

    func signal(_ number: Int32) { kill(pid, number) }

    /// What the process has written to stdout so far.
    var stdoutSoFar: String { (try? String(contentsOf: outURL, encoding: .utf8)) ?? "" }

    /// What the process has written to stderr so far.
    var stderrSoFar: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    /// Waits for the exit and reads what it printed.
    func outcome() async throws -> Outcome {
        let status = await exited.value
        defer { try? FileManager.default.removeItem(at: directory) }
        return Outcome(
            status: status,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }
}

/// Polls `condition` every 50 ms until it holds or `timeout` passes.
func eventually(timeout: Duration = .seconds(60), _ condition: () throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try condition()
}

/// Polls an async `condition` every 50 ms until it holds or `timeout` passes.
func eventually(timeout: Duration = .seconds(60), _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
