import ArgumentParser
import Foundation
#if canImport(Glibc)
    import CMalloc
#endif
import NIOCore
import NIOPosix

/// The `main()` both executables share: parses, runs, and reports usage errors with exit code 2
/// (ArgumentParser's default is 64), as the README and `--help` document, and a `CommandFailure`
/// with its own code.
package enum CommandMain {
    package static func run(_ root: any ParsableCommand.Type) async {
        #if canImport(Glibc)
            // Two malloc arenas, not glibc's eight per core: memory the event loops allocate and
            // SQLite's writer frees kept every arena at its high-water mark (MALLOC_ARENA_MAX=2 took
            // a poll's peak RSS at c = 256 from 77 to 67 MB, Scripts/bench.sh, at no CPU cost
            // measured). Set before any other thread allocates: glibc fixes the limit when a second
            // arena is first wanted.
            mallopt(M_ARENA_MAX, 2)
        #endif
        // Swift concurrency runs on NIO's event loops: an answer read by the HTTP client resumes
        // the task waiting for it on the same thread, without a hop to another pool.
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        do {
            var command = try root.parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            FileHandle.standardError.write(Data("error: \(failure.message)\n".utf8))
            Foundation.exit(failure.code.rawValue)
        } catch {
            if root.exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((root.fullMessage(for: error) + "\n").utf8))
                Foundation.exit(Int32(2))
            }
            root.exit(withError: error)
        }
    }
}
