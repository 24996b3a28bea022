import ArgumentParser

package enum LogFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}
