import ArgumentParser
import Foundation
import StatusPolling

/// Prints `message` to stderr and returns exit code 2 (usage or configuration error) to throw.
func usageError(_ message: String) -> ExitCode {
    exitError(.usage, message)
}

/// Prints `message` to stderr and returns `code` to throw.
func exitError(_ code: RunExitCode, _ message: String) -> ExitCode {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    return ExitCode(code.rawValue)
}

/// Writes a line to stdout at once (unbuffered), so progress shows while a long command runs.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
