/// Every decoded row of a query (`rows.decode(T.self).collect()`): the store's results are small
/// pages, read whole.
extension AsyncThrowingMapSequence {
    func collect() async throws -> [Transformed] {
        var values: [Transformed] = []
        for try await value in self { values.append(value) }
        return values
    }
}
