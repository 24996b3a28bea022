import Foundation

/// A stacked chart drawn as inline SVG — areas (a share or a count over days) or bars (a count per
/// week or run) — with its axes, units and x labels. No script and no external resource: the page
/// prints and opens from an e-mail attachment. Text and axes take the page's colour
/// (`currentColor`), so one drawing serves the light and the dark scheme.
public struct StackedChart: Sendable {
    public enum Style: Sendable { case area, bars }

    /// A vertical line at an x position (e.g. the grace period's end), labelled.
    public struct Marker: Sendable {
        public var x: Double
        public var label: String
        public init(x: Double, label: String) {
            self.x = x
            self.label = label
        }
    }

    /// A labelled point that is not a series (e.g. Apple's published figure), drawn as a ring.
    public struct Reference: Sendable {
        public var x: Double
        public var y: Double
        public var label: String
        public init(x: Double, y: Double, label: String) {
            self.x = x
            self.y = y
            self.label = label
        }
    }

    public var style: Style
    public var series: [ChartSeries]
    /// One label per point; only some are drawn when they would crowd.
    public var xLabels: [String]
    public var xTitle: String
    public var yTitle: String
    /// Values are fractions 0…1, drawn as per cent on a 0–100 % axis.
    public var shares: Bool
    /// Each point scaled to 100 % of its stack (a mix, e.g. churn by intent).
    public var normalized: Bool
    /// The axis scaled to the points after the first, the first drawn cut at the top with its
    /// figure written on it: a first day when every row was verified at once (3,000 new against
    /// tens a day after) would otherwise flatten every later day to the bottom.
    public var scalesPastFirstPoint = false
    public var markers: [Marker] = []
    public var references: [Reference] = []
    public var width = 760.0
    public var height = 300.0

    public init(
        style: Style, series: [ChartSeries], xLabels: [String], xTitle: String, yTitle: String, shares: Bool = false, normalized: Bool = false,
        scalesPastFirstPoint: Bool = false
    ) {
        self.scalesPastFirstPoint = scalesPastFirstPoint
        self.style = style
        self.series = series
        self.xLabels = xLabels
        self.xTitle = xTitle
        self.yTitle = yTitle
        self.shares = shares
        self.normalized = normalized
    }

    private let left = 64.0, right = 16.0, top = 12.0, bottom = 44.0

    /// Whether some series has a value above zero (a chart with nothing drawn says so instead).
    public var hasData: Bool { series.contains { $0.values.contains { $0 != 0 } } }

    /// The `<svg>` element; `title` labels it for screen readers.
    public func svg(title: String) -> String {
        let count = xLabels.count
        // Bars of negative values (losses) hang below a zero line in the middle, when a series has any.
        let diverging = style == .bars && !normalized && !shares && series.contains { $0.values.contains { $0 < 0 } }
        let stacks = (0..<count).map { index in series.map { index < $0.values.count ? (diverging ? $0.values[index] : max(0, $0.values[index])) : 0 } }
        let totals = stacks.map { $0.filter { $0 > 0 }.reduce(0, +) }
        let losses = stacks.map { -$0.filter { $0 < 0 }.reduce(0, +) }
        let scaled = scalesPastFirstPoint && count > 1 ? Array(totals.dropFirst()) : totals
        let top = normalized || shares ? 1.0 : Self.niceCeiling(max(scaled.max() ?? 0, diverging ? losses.max() ?? 0 : 0))
        let lowest = diverging ? -top : 0
        let plotWidth = width - left - right, plotHeight = height - self.top - bottom
        let slot = plotWidth / Double(max(count, 1))
        func x(_ index: Double) -> Double { style == .bars ? left + slot * (index + 0.5) : left + (count > 1 ? plotWidth * index / Double(count - 1) : plotWidth / 2) }
        func y(_ value: Double) -> Double { self.top + plotHeight * (1 - min(max((value - lowest) / max(top - lowest, 1e-12), 0), 1)) }
        var out = #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \#(Self.n(width)) \#(Self.n(height))" role="img" aria-label="\#(Self.escape(title))" class="chart">"#
        // Horizontal grid and y labels.
        for step in 0...4 {
            let value = lowest + (top - lowest) * Double(step) / 4
            let label = shares || normalized ? "\(Int((value * 100).rounded())) %" : Self.count(value)
            out += #"<line x1="\#(Self.n(left))" x2="\#(Self.n(width - right))" y1="\#(Self.n(y(value)))" y2="\#(Self.n(y(value)))" class="grid"/>"#
            out += #"<text x="\#(Self.n(left - 6))" y="\#(Self.n(y(value) + 4))" text-anchor="end">\#(label)</text>"#
        }
        // The series, bottom of the stack first.
        var below = Array(repeating: 0.0, count: count), belowZero = below
        for (index, serie) in series.enumerated() {
            let values = (0..<count).map { point -> Double in
                let value = stacks[point][index]
                return normalized ? (totals[point] > 0 ? value / totals[point] : 0) : value
            }
            let above = zip(below, values).map { $0 + max($1, 0) }
            switch style {
            case .area:
                let upper = (0..<count).map { "\(Self.n(x(Double($0)))),\(Self.n(y(above[$0])))" }
                let lower = (0..<count).reversed().map { "\(Self.n(x(Double($0)))),\(Self.n(y(below[$0])))" }
                out += #"<polygon points="\#((upper + lower).joined(separator: " "))" fill="\#(serie.color)" class="series"><title>\#(Self.escape(serie.name))</title></polygon>"#
            case .bars:
                for point in 0..<count where values[point] != 0 {
                    let (high, low) = values[point] > 0 ? (above[point], below[point]) : (belowZero[point], belowZero[point] + values[point])
                    out += #"<rect x="\#(Self.n(x(Double(point)) - slot * 0.4))" y="\#(Self.n(y(high)))" width="\#(Self.n(slot * 0.8))" height="\#(Self.n(y(low) - y(high)))" fill="\#(serie.color)" class="series"><title>\#(Self.escape("\(serie.name): \(xLabels[point]) \(Self.value(values[point], shares: shares || normalized))"))</title></rect>"#
                }
            }
            below = zip(below, values).map { $0 + max($1, 0) }
            belowZero = zip(belowZero, values).map { $0 + min($1, 0) }
        }
        // Bars taller than the axis: cut at the top, their figure written on them.
        if style == .bars, !normalized, !shares {
            for point in 0..<count where totals[point] > top {
                out += #"<text x="\#(Self.n(x(Double(point))))" y="\#(Self.n(self.top + 14))" text-anchor="middle" class="clipped-label">\#(Self.count(totals[point])) ↑</text>"#
            }
        }
        for marker in markers {
            let mx = x(marker.x)
            out += #"<line x1="\#(Self.n(mx))" x2="\#(Self.n(mx))" y1="\#(Self.n(self.top))" y2="\#(Self.n(self.top + plotHeight))" class="marker"/>"#
            out += #"<text x="\#(Self.n(mx + 4))" y="\#(Self.n(self.top + 12))">\#(Self.escape(marker.label))</text>"#
        }
        for reference in references {
            out += #"<circle cx="\#(Self.n(x(reference.x)))" cy="\#(Self.n(y(reference.y)))" r="5" class="reference"><title>\#(Self.escape(reference.label))</title></circle>"#
            // Labelled on the side with room: left of a ring in the right half.
            let leftward = x(reference.x) > left + plotWidth / 2
            out += #"<text x="\#(Self.n(x(reference.x) + (leftward ? -8 : 8)))" y="\#(Self.n(y(reference.y) - 6))" text-anchor="\#(leftward ? "end" : "start")" class="reference-label">\#(Self.escape(reference.label))</text>"#
        }
        // Axes, x labels (at most about ten) and the axis titles.
        out += #"<line x1="\#(Self.n(left))" x2="\#(Self.n(width - right))" y1="\#(Self.n(self.top + plotHeight))" y2="\#(Self.n(self.top + plotHeight))" class="axis"/>"#
        out += #"<line x1="\#(Self.n(left))" x2="\#(Self.n(left))" y1="\#(Self.n(self.top))" y2="\#(Self.n(self.top + plotHeight))" class="axis"/>"#
        let every = max(1, Int((Double(count) / 10).rounded(.up)))
        for point in stride(from: 0, to: count, by: every) {
            out += #"<text x="\#(Self.n(x(Double(point))))" y="\#(Self.n(self.top + plotHeight + 16))" text-anchor="middle">\#(Self.escape(xLabels[point]))</text>"#
        }
        out += #"<text x="\#(Self.n(left + plotWidth / 2))" y="\#(Self.n(height - 6))" text-anchor="middle" class="axis-title">\#(Self.escape(xTitle))</text>"#
        out += #"<text x="14" y="\#(Self.n(self.top + plotHeight / 2))" text-anchor="middle" transform="rotate(-90 14 \#(Self.n(self.top + plotHeight / 2)))" class="axis-title">\#(Self.escape(yTitle))</text>"#
        return out + "</svg>"
    }

    /// 1, 2 or 5 times a power of ten, at or above `value` (at least 1).
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 1 else { return 1 }
        let power = pow(10, floor(log10(value)))
        return [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= value } ?? value
    }

    static func n(_ value: Double) -> String { String(format: "%.1f", value) }

    static func count(_ value: Double) -> String { abs(value) >= 10_000 ? "\(Int((value / 1000).rounded())) k" : String(Int(value.rounded())) }

    static func value(_ value: Double, shares: Bool) -> String { shares ? String(format: "%.1f %%", value * 100) : String(Int(value.rounded())) }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
