import Configuration
import Foundation
import PollerCommandLine

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

    /// An on/off switch (`on`/`off`, `true`/`false` in the config file).
    func onOff(_ option: OnOff?, _ key: String, default value: OnOff) throws -> OnOff {
        if let option { return option }
        if let flag = reader.bool(forKey: ConfigKey(key)) { return flag ? .on : .off }
        guard let text = reader.string(forKey: ConfigKey(key)) else { return value }
        guard let parsed = OnOff(rawValue: text.lowercased()) else { throw usageError("\(key) must be on or off, got '\(text)'.") }
        return parsed
    }

    /// A repeatable option, else a comma-separated list in the config file or the environment.
    func list(_ option: [String], _ key: String) -> [String] {
        guard option.isEmpty else { return option }
        return string(nil, key).map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } } ?? []
    }

    /// Apple's numeric id of the app, from the option or the settings.
    func appAppleID(_ option: Int64?) throws -> Int64? {
        if let option { return option }
        return try string(nil, "app_apple_id").map { text in
            guard let number = Int64(text), number > 0 else { throw usageError("app_apple_id must be Apple's numeric app id, got '\(text)'.") }
            return number
        }
    }

    /// A flag that the config file or the environment can also turn on.
    func flag(_ option: Bool, _ key: String) -> Bool {
        option || reader.bool(forKey: ConfigKey(key)) == true || ["true", "on", "1"].contains(reader.string(forKey: ConfigKey(key))?.lowercased() ?? "")
    }
}
