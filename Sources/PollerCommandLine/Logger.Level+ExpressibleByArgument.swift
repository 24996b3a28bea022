import ArgumentParser
import Logging

/// `--log-level debug` parses straight into swift-log's level.
extension Logger.Level: @retroactive ExpressibleByArgument {}
