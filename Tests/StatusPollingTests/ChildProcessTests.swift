import Foundation
import PollingDemo
import Testing

/// `ChildProcess`, which starts the demo's workers and the tests' binary: children started while
/// the parent holds more descriptors than one 32 KiB read of /proc/self/fd lists — where
/// Foundation's `Process.run()` crashed — inherit none of them.
@Suite struct ChildProcessTests {
    @Test func aChildStartedBesideFourteenHundredOpenDescriptorsInheritsNone() async throws {
        // The suite's other tests hold up to some 1,600 beside these: room for both, when allowed.
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 4096, limit.rlim_max >= 4096 {
            limit.rlim_cur = 4096
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        var opened: [Int32] = []
        defer { for fd in opened { close(fd) } }
        // 1,400: more entries than one 32 KiB read of /proc/self/fd returns.
        for _ in 0..<1400 {
            let fd = open("/dev/null", O_RDONLY)  // no O_CLOEXEC: inherited unless the spawn closes it
            try #require(fd >= 0, "open: errno \(errno)")
            opened.append(fd)
        }
        let directory = FileManager.default.temporaryDirectory
        for _ in 0..<5 {
            // `ls` lists its own descriptors: stdin, stdout, stderr and the directory it reads.
            let (end, output) = try await ChildProcess.run("/bin/ls", ["/proc/self/fd"], in: directory, environment: [:])
            #expect(end == .exited(0))
            #expect(output.split(separator: "\n") == ["0", "1", "2", "3"])
        }
    }

    @Test func theEndIsTheExitCodeOrTheSignal() async throws {
        let directory = FileManager.default.temporaryDirectory
        #expect(try await ChildProcess.run("/bin/sh", ["-c", "exit 3"], in: directory, environment: [:]).end == .exited(3))
        let out = directory.appendingPathComponent("child-\(UUID().uuidString).out")
        let err = directory.appendingPathComponent("child-\(UUID().uuidString).err")
        defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
        let child = try await ChildProcess.start("/bin/sh", ["-c", "echo started; exec sleep 600"], environment: [:], stdout: out, stderr: err)
        #expect(try await eventually { (try? String(contentsOf: out, encoding: .utf8)) == "started\n" })
        kill(child.pid, SIGKILL)
        let end = try await child.end.value
        #expect(end == .signalled(SIGKILL))
        #expect("\(end)" == "was killed by signal 9")
        #expect("\(ChildProcess.End.exited(3))" == "exited 3")
    }
}
