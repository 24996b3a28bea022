/// What a library workflow threw inside a transaction (not the database): carried past the store's
/// error mapping so that it comes out as it is, as SQLite's does.
struct WorkflowFailure: Error {
    let error: any Error
}
