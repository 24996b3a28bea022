extension TrailReport {
    /// How many pages are read at once while one is counted: the store's work (SQLite's or
    /// PostgreSQL's JSON parsing) on one core, the counting on the other.
    static let pagesInFlight = 3

    /// Reads `trail` in one pass, pages of `pageSize` ids (several read at once, counted in order),
    /// into a report over [fromMs, toMs) (nil `fromMs`: from the trail's first event's day).
    /// `onEpisode` sees each billing episode of the report as it closes, then the open ones.
    public static func read(
        _ trail: any SubscriptionTrail, runs: [RunRecord], fromMs: Int64?, toMs: Int64, environment: String?, generatedAtMs: Int64, pageSize: Int = 5_000,
        onEpisode: ((BillingEpisode) -> Void)? = nil
    ) async throws -> TrailReport {
        func builder(firstEventAtMs: Int64?) -> TrailReportBuilder {
            TrailReportBuilder(fromMs: fromMs ?? firstEventAtMs ?? toMs - 86_400_000, toMs: toMs, environment: environment, onEpisode: onEpisode)
        }
        guard let ids = try await trail.trailEventIDs() else {
            var empty = builder(firstEventAtMs: nil)
            return empty.finish(runs: runs, generatedAtMs: generatedAtMs)
        }
        var starts = stride(from: ids.lowerBound, through: ids.upperBound, by: pageSize).makeIterator()
        var inFlight: [Task<[TrailEvent], any Error>] = []
        func readNext() {
            guard let start = starts.next() else { return }
            let end = min(start + Int64(pageSize), ids.upperBound + 1)
            inFlight.append(Task { try await trail.trailEvents(in: start..<end) })
        }
        for _ in 0..<pagesInFlight { readNext() }
        var report: TrailReportBuilder?
        var firstAtMs: Int64?
        do {
            while !inFlight.isEmpty {
                let page = try await inFlight.removeFirst().value
                readNext()
                if report == nil, let first = page.first {
                    report = builder(firstEventAtMs: first.atMs)
                    firstAtMs = first.atMs
                }
                for event in page { report?.add(event) }
            }
        } catch {
            for task in inFlight { task.cancel() }
            throw error
        }
        var finished = report ?? builder(firstEventAtMs: nil)
        var read = finished.finish(runs: runs, generatedAtMs: generatedAtMs)
        read.trailStartsAtMs = firstAtMs
        return read
    }
}
