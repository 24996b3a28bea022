import EntitlementCore

/// Group commit for the receiver: notifications arriving while a transaction is being written wait
/// and go together in the next one, so the rate is bounded by signature checks, not by commits,
/// and each sender still hears back only after its own notification is durable. No timer: a lone
/// notification is written at once.
actor NotificationCommitQueue {
    private let inbox: any NotificationInbox
    private let ingest: NotificationIngest
    private let clock: @Sendable () -> Int64
    private let maxBatch: Int
    private var waiting: [(notification: ReceivedNotification, reply: CheckedContinuation<NotificationOutcome, any Error>)] = []
    private var isWriting = false

    init(inbox: any NotificationInbox, ingest: NotificationIngest, maxBatch: Int, clock: @escaping @Sendable () -> Int64) {
        self.inbox = inbox
        self.ingest = ingest
        self.maxBatch = maxBatch
        self.clock = clock
    }

    /// Records and applies `notification`; returns once its transaction committed.
    func commit(_ notification: ReceivedNotification) async throws -> NotificationOutcome {
        try await withCheckedThrowingContinuation { reply in
            waiting.append((notification, reply))
            if !isWriting {
                isWriting = true
                Task { await self.writeWaiting() }
            }
        }
    }

    private func writeWaiting() async {
        while !waiting.isEmpty {
            let batch = Array(waiting.prefix(maxBatch))
            waiting.removeFirst(batch.count)
            await write(batch)
        }
        isWriting = false
    }

    /// One transaction for the batch. When it fails for one notification's sake (not the store's
    /// as a whole), each is tried alone, so one cannot make its neighbours be sent again.
    private func write(_ batch: [(notification: ReceivedNotification, reply: CheckedContinuation<NotificationOutcome, any Error>)]) async {
        do {
            let outcomes = try await inbox.receive(batch.map(\.notification), ingest: ingest, nowMs: clock())
            for (entry, outcome) in zip(batch, outcomes) { entry.reply.resume(returning: outcome) }
        } catch let error as StoreError {
            for entry in batch { entry.reply.resume(throwing: error) }
        } catch {
            guard batch.count > 1 else {
                batch[0].reply.resume(throwing: error)
                return
            }
            for entry in batch { await write([entry]) }
        }
    }
}
