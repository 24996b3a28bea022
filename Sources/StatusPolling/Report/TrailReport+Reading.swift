extension TrailReport {
    /// Reads `trail` in one pass, a page of `pageSize` events at a time (the next read while one is
    /// counted), into a report over [fromMs, toMs) (nil `fromMs`: from the trail's first event's
    /// day). `onEpisode` sees each billing episode of the report as it closes, then the open ones.
    public static func read(
        _ trail: any SubscriptionTrail, runs: [RunRecord], fromMs: Int64?, toMs: Int64, environment: String?, generatedAtMs: Int64, pageSize: Int = 5_000,
        onEpisode: ((BillingEpisode) -> Void)? = nil
    ) async throws -> TrailReport {
        var page = try await trail.trailEvents(after: 0, limit: pageSize)
        var builder = TrailReportBuilder(
            fromMs: fromMs ?? page.map(\.atMs).min() ?? toMs - 86_400_000, toMs: toMs, environment: environment, onEpisode: onEpisode)
        while !page.isEmpty {
            // The next page is read while this one is counted: two pages in memory, two cores busy.
            let next = page.count == pageSize ? page.last.map { last in Task { try await trail.trailEvents(after: last.id, limit: pageSize) } } : nil
            for event in page { builder.add(event) }
            guard let next else { break }
            page = try await next.value
        }
        return builder.finish(runs: runs, generatedAtMs: generatedAtMs)
    }
}
