/// Which build this is, for `status-poller --version`, every run's report and bug reports: the
/// version, the git commit and the build date, baked in at build time by `BuildInfoPlugin`.
public enum BuildInfo {
    /// The version when HEAD carries no `v*` tag. Bump it with each release (and tag the release
    /// commit `vX.Y.Z`, which then wins).
    public static let declaredVersion = "0.9.0"

    /// The release: HEAD's `v*` tag without the `v`, else ``declaredVersion``.
    public static var version: String { Generated.tagVersion ?? declaredVersion }

    /// HEAD's short hash, `+dirty` when tracked files differed from it; `unknown` without git.
    public static var commit: String { Generated.commit }

    /// When the build ran, UTC ISO 8601 (`SOURCE_DATE_EPOCH` when set).
    public static var buildDate: String { Generated.buildDate }

    /// One line naming the build, as every run's JSON report records it under `version`:
    /// `0.9.0 (commit 1a2b3c4d5e, built 2026-11-26T04:30:00Z)`.
    public static var summary: String { "\(version) (commit \(commit), built \(buildDate))" }

    /// What `status-poller --version` prints: three lines, `status-poller VERSION`,
    /// `commit HASH[+dirty]` and `built DATE`.
    public static var versionText: String {
        "status-poller \(version)\ncommit \(commit)\nbuilt \(buildDate)"
    }
}
