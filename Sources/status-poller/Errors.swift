import ArgumentParser
import Foundation
import StatusPolling

/// A command that cannot go on: its exit code and what to tell the operator. Thrown where the
/// problem is found and printed once, by `StatusPoller.main()`, where it is reported — a failure
/// that is caught and replaced on its way up is never printed.
struct CommandFailure: Error, CustomStringConvertible {
    var code: RunExitCode
    var message: String
    var description: String { message }
}

/// A usage or configuration error (exit code 2) to throw.
func usageError(_ message: String) -> CommandFailure {
    CommandFailure(code: .usage, message: message)
}

/// An error with exit code `code` to throw.
func exitError(_ code: RunExitCode, _ message: String) -> CommandFailure {
    CommandFailure(code: code, message: message)
}

/// Writes a line to stdout at once (unbuffered), so progress shows while a long command runs.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
