import ArgumentParser
import Foundation
import NIOCore
import NIOPosix

/// The `main()` both executables share: parses, runs, and reports usage errors with exit code 2
/// (ArgumentParser's default is 64), as the README and `--help` document, and a `CommandFailure`
/// with its own code.
package enum CommandMain {
    package static func run(_ root: any ParsableCommand.Type) async {
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
