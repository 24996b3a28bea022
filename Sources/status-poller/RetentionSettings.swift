import Foundation
import PollerCommandLine
import StatusPolling

/// The retention settings (`audit_keep_days`, `notifications_keep_days`, `runs_keep_days`,
/// `prune_archive_dir`): options of `prune`, else the environment or the config file, as every
/// setting. None set keeps everything, as before.
enum RetentionSettings {
    static func policy(
        _ settings: Settings, keepDays options: [RetentionPolicy.Setting: Int] = [:], archiveDirectory: String? = nil
    ) throws -> RetentionPolicy {
        var keepDays: [RetentionPolicy.Setting: Int] = [:]
        for setting in RetentionPolicy.Setting.allCases {
            let text = options[setting].map(String.init) ?? settings.string(nil, setting.rawValue)
            guard let text, !text.isEmpty else { continue }
            guard let days = Int(text), days >= RetentionPolicy.minimumDays else {
                throw usageError("""
                    \(setting.rawValue) must be a whole number of days, at least \(RetentionPolicy.minimumDays) \
                    (Apple retries a notification for 3 days), got '\(text)'; leave it out to keep everything.
                    """)
            }
            keepDays[setting] = days
        }
        let archive = archiveDirectory ?? settings.string(nil, "prune_archive_dir")
        if let archive {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: archive, isDirectory: &isDirectory), isDirectory.boolValue,
                FileManager.default.isWritableFile(atPath: archive)
            else { throw usageError("prune_archive_dir \(archive) is not a folder this user can write: create it, or leave it out to delete without an archive.") }
        }
        return RetentionPolicy(keepDays: keepDays, archiveDirectory: archive)
    }
}
