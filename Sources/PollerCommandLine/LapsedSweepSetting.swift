import StatusPolling

/// `--lapsed-within` and `--lapsed-every` (whole days), checked and made into the sweep.
package struct LapsedSweepSetting {
    /// Nil when `--lapsed-every 0` turned the sweep off.
    package var sweep: LapsedSweep?
    /// As the run history records it.
    package var recorded: String

    package static func resolve(within: Int, every: Int) throws -> Self {
        let allowed = LapsedSweep.allowedWithinDays
        guard allowed.contains(within) else { throw usageError("--lapsed-within must be between \(allowed.lowerBound) and \(allowed.upperBound) days, got \(within).") }
        guard (0...within).contains(every) else {
            throw usageError("--lapsed-every must be between 0 (no sweep) and --lapsed-within (\(within)) days, got \(every).")
        }
        guard every > 0 else { return Self(sweep: nil, recorded: "off") }
        let sweep = LapsedSweep(within: .seconds(Int64(within) * 86400), every: .seconds(Int64(every) * 86400))
        return Self(sweep: sweep, recorded: "every \(every) days within \(within) days of expiry")
    }
}
