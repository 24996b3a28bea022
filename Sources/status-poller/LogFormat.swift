import ArgumentParser

enum LogFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}
