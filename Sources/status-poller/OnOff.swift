import ArgumentParser

/// A switch spelled as operators write it in crontabs and config files.
enum OnOff: String, ExpressibleByArgument, CaseIterable {
    case on, off
}
