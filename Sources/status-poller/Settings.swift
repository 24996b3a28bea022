import Configuration
import Foundation

/// Reads one setting with the documented precedence and a clear error for a bad value.
struct Settings {
    let reader: ConfigReader

    func string(_ option: String?, _ key: String) -> String? {
        option ?? reader.string(forKey: ConfigKey(key))
    }

    func required(_ option: String?, _ key: String, flag: String) throws -> String {
        guard let value = string(option, key), !value.isEmpty else {
            throw usageError("\(flag) is required (or \(key) in the config file, or STATUS_POLLER_\(key.uppercased())).")
        }
        return value
    }

    func int(_ option: Int?, _ key: String, default value: Int) throws -> Int {
        if let option { return option }
        if let number = reader.int(forKey: ConfigKey(key)) { return number }
        guard let text = reader.string(forKey: ConfigKey(key)) else { return value }
        guard let number = Int(text) else { throw usageError("\(key) must be a whole number, got '\(text)'.") }
        return number
    }

    func double(_ option: Double?, _ key: String, default value: Double) throws -> Double {
        if let option { return option }
        if let number = reader.double(forKey: ConfigKey(key)) { return number }
        if let number = reader.int(forKey: ConfigKey(key)) { return Double(number) }
        guard let text = reader.string(forKey: ConfigKey(key)) else { return value }
        guard let number = Double(text) else { throw usageError("\(key) must be a number, got '\(text)'.") }
        return number
    }
}
