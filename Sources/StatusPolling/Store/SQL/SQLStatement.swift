/// A statement in SQL both stores accept, written with string interpolation as PostgresNIO's
/// queries are (`WHERE id = \(id)` binds `id`, never splices it), and rendered with each
/// dialect's placeholders. What a dialect spells otherwise goes in as `\(unescaped:)` text the
/// caller picked by ``SQLDialect``, so the difference stays in sight.
public struct SQLStatement: Sendable, Equatable, ExpressibleByStringInterpolation {
    /// The text around the values: one piece more than there are values.
    private var pieces: [String]
    /// The values, in the order of their placeholders.
    public private(set) var values: [SQLValue]
    /// The whole text with SQLite's placeholders, when it was given so (``init(sqlite:_:)``).
    private var sqliteText: String?

    /// A statement run once per row by SQLite: its text with `?` placeholders, made once (a
    /// static), and its values. Rendered for PostgreSQL, each `?` is numbered.
    /// The text is split at its `?`s only when another dialect or statement needs the pieces: a
    /// writer makes one of these per row (splitting each was 14 % of a poll's CPU).
    public init(sqlite text: String, _ values: [SQLValue]) {
        pieces = []
        self.values = values
        sqliteText = text
    }

    /// The text around the values (``pieces``), split from SQLite's text when it was given so.
    private var textPieces: [String] {
        guard pieces.isEmpty, let sqliteText else { return pieces }
        return sqliteText.split(separator: "?", omittingEmptySubsequences: false).map(String.init)
    }

    public init(stringLiteral value: String) {
        pieces = [value]
        values = []
    }

    public init(stringInterpolation: Interpolation) {
        pieces = stringInterpolation.pieces
        values = stringInterpolation.values
    }

    public static func == (a: SQLStatement, b: SQLStatement) -> Bool {
        a.textPieces == b.textPieces && a.values == b.values
    }

    /// Whether the text is one made once and run again and again with other values (``init(sqlite:_:)``):
    /// worth keeping compiled on the connection.
    public var isFixedText: Bool { sqliteText != nil }

    /// The text with `dialect`'s placeholders.
    public func sql(_ dialect: SQLDialect) -> String {
        if dialect == .sqlite, let sqliteText { return sqliteText }
        let pieces = textPieces
        var sql = pieces[0]
        for (index, piece) in pieces.dropFirst().enumerated() {
            sql += dialect.placeholder(index + 1) + piece
        }
        return sql
    }

    /// `WHERE` and the conditions joined by `AND`; empty when there are none.
    public init(where conditions: [SQLStatement]) {
        self = ""
        for (index, condition) in conditions.enumerated() {
            self = "\(self)\(unescaped: index == 0 ? "WHERE " : " AND ")\(condition)"
        }
    }

    /// Builds a statement: literals as text, interpolated values bound.
    public struct Interpolation: StringInterpolationProtocol {
        var pieces = [""]
        var values: [SQLValue] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            values.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            pieces[pieces.count - 1] += literal
        }

        /// SQL text, not a value: a column list, or what one dialect spells its own way.
        public mutating func appendInterpolation(unescaped text: String) {
            appendLiteral(text)
        }

        public mutating func appendInterpolation(_ value: String?) {
            bind(value.map(SQLValue.text) ?? .null)
        }

        public mutating func appendInterpolation(_ value: Int64?) {
            bind(value.map(SQLValue.integer) ?? .null)
        }

        public mutating func appendInterpolation(_ value: Int?) {
            bind(value.map { .integer(Int64($0)) } ?? .null)
        }

        public mutating func appendInterpolation(_ value: Int32?) {
            bind(value.map { .integer(Int64($0)) } ?? .null)
        }

        /// A value as it is.
        public mutating func appendInterpolation(_ value: SQLValue) {
            bind(value)
        }

        /// A flag as 0 or 1.
        public mutating func appendInterpolation(_ value: Bool?) {
            bind(SQLValue(value))
        }

        /// Each of `values` bound, separated by commas: the inside of `IN (…)` (at least one value).
        public mutating func appendInterpolation(list values: [String]) {
            for (index, value) in values.enumerated() {
                if index > 0 { appendLiteral(", ") }
                bind(.text(value))
            }
        }

        /// Each of `values` bound, separated by commas: the inside of `IN (…)` (at least one value).
        public mutating func appendInterpolation(list values: [Int64]) {
            for (index, value) in values.enumerated() {
                if index > 0 { appendLiteral(", ") }
                bind(.integer(value))
            }
        }

        /// `parts`' texts and values in place, `separator` between them: a list of rows or values
        /// built in one pass (each appended by interpolating the statement so far copied it again).
        public mutating func appendInterpolation(joined parts: [SQLStatement], separator: String = ", ") {
            for (index, part) in parts.enumerated() {
                if index > 0 { appendLiteral(separator) }
                appendInterpolation(part)
            }
        }

        /// Another statement's text and values, in place.
        public mutating func appendInterpolation(_ statement: SQLStatement) {
            let pieces = statement.textPieces
            appendLiteral(pieces[0])
            for (value, piece) in zip(statement.values, pieces.dropFirst()) {
                bind(value)
                appendLiteral(piece)
            }
        }

        private mutating func bind(_ value: SQLValue) {
            values.append(value)
            pieces.append("")
        }
    }
}
