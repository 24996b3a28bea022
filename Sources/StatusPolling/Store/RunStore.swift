/// What a job needs from a database around and inside its run (``PollJob``): the run history it
/// opens and closes (``RunJournal``), and the rows it selects and writes (``SubscriptionStore``;
/// leased a page at a time on a store that several workers share, ``RowSharing/leased(_:)``).
public typealias RunStore = SubscriptionStore & RunJournal
