import ArgumentParser

enum ReportFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}
