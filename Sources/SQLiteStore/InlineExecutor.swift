import Foundation

/// Runs an async body to its end on the calling thread. GRDB's write closure is synchronous, on
/// the writer's thread; the library's workflows are written once, with `await`, for both stores.
/// Run here, inside that closure, a workflow's awaits on a ``SQLiteSession`` never suspend (they
/// are synchronous calls), so every statement runs on the writer's thread, inside GRDB's
/// transaction. A job the body hands elsewhere (an actor) comes back here and this thread waits
/// for it. A body must never await the pool itself (`pool.write` would wait for this very thread).
final class InlineExecutor<Value: Sendable>: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var result: Result<Value, any Error>?

    private init() {}

    /// `body`'s value, or what it threw, once it has run on this thread.
    static func run(_ body: @escaping @Sendable () async throws -> Value) throws -> Value {
        let executor = InlineExecutor()
        Task(executorPreference: executor) {
            let result: Result<Value, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            executor.finish(result)
        }
        return try executor.runJobs().get()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func finish(_ result: Result<Value, any Error>) {
        condition.lock()
        self.result = result
        condition.signal()
        condition.unlock()
    }

    /// Runs the body's jobs here until it has finished.
    private func runJobs() -> Result<Value, any Error> {
        while true {
            condition.lock()
            while jobs.isEmpty && result == nil { condition.wait() }
            if jobs.isEmpty, let result {
                condition.unlock()
                return result
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
