import ArgumentParser
import Foundation
import StatusPolling

/// A command that cannot go on: its exit code and what to tell the operator. Thrown where the
/// problem is found and printed once, by `CommandMain.run`, where it is reported — a failure
/// that is caught and replaced on its way up is never printed.
package struct CommandFailure: Error, CustomStringConvertible {
    package var code: RunExitCode
    package var message: String
    package var description: String { message }

    package init(code: RunExitCode, message: String) {
        self.code = code
        self.message = message
    }
}

/// A usage or configuration error (exit code 2) to throw.
package func usageError(_ message: String) -> CommandFailure {
    CommandFailure(code: .usage, message: message)
}

/// An error with exit code `code` to throw.
package func exitError(_ code: RunExitCode, _ message: String) -> CommandFailure {
    CommandFailure(code: code, message: message)
}

/// Writes a line to stdout at once (unbuffered), so progress shows while a long command runs.
package func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
