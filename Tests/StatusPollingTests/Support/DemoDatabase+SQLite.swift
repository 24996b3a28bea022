import PollingDemo
import SQLiteStore

extension DemoDatabase {
    /// A SQLite file for the demo, with the store's own demo hooks, as the executable hands them over.
    static func sqlite(path: String) -> DemoDatabase {
        let database = SQLiteDatabase(path: path)
        return DemoDatabase(database, isReplaceable: { await database.isReplaceableByDemo() }, recreate: { try await database.recreateForDemo() })
    }
}
