import Foundation

/// Get Transaction History's `revision`: an opaque token for the next page. Here it carries the
/// offset of the next transaction; a client must send back exactly what it got.
struct HistoryRevision: Equatable {
    var offset: Int

    init(offset: Int) { self.offset = offset }

    /// Reads a token this simulator issued; nil for anything else (Apple answers 4000005).
    init?(token: String) {
        guard let data = Base64URL.decode(token), let text = String(data: data, encoding: .utf8), text.hasPrefix("sim-history:"),
            let offset = Int(text.dropFirst("sim-history:".count)), offset >= 0
        else { return nil }
        self.offset = offset
    }

    var token: String { Base64URL.encode(Data("sim-history:\(offset)".utf8)) }
}
