import Testing

@testable import ReportPage

/// The page's bar charts when the first day dwarfs the rest (every row verified at once).
@Suite struct StackedChartTests {
    static func chart(scalesPastFirstPoint: Bool) -> StackedChart {
        StackedChart(
            style: .bars,
            series: [
                ChartSeries(name: "refunds", color: ChartPalette.vermillion, values: [0, 1, 2, 0]),
                ChartSeries(name: "renewals and new", color: ChartPalette.blue, values: [3_180, 14, 17, 9]),
            ],
            xLabels: ["d1", "d2", "d3", "d4"], xTitle: "day", yTitle: "subscriptions", scalesPastFirstPoint: scalesPastFirstPoint)
    }

    /// Grid labels are the `text-anchor="end"` texts at the axis's left, bottom to top.
    static func yLabels(_ svg: String) -> [String] {
        svg.components(separatedBy: #"text-anchor="end">"#).dropFirst().map { String($0.prefix { $0 != "<" }) }
    }

    @Test func theAxisIsScaledToTheDaysAfterTheFirstWhichIsCutAndLabelled() {
        let svg = Self.chart(scalesPastFirstPoint: true).svg(title: "t")
        #expect(Self.yLabels(svg) == ["0", "5", "10", "15", "20"])  // the days after: at most 19
        #expect(svg.contains(#"class="clipped-label">3180 ↑</text>"#))
        #expect(svg.components(separatedBy: "clipped-label").count - 1 == 1)
        // The first day's bar reaches the top of the plot (y = 12) and no further.
        #expect(svg.contains(#"<rect x="81.0" y="12.0" width="136.0" height="244.0" fill="\#(ChartPalette.blue)""#))
    }

    @Test func withoutItTheFirstDaySetsTheAxis() {
        let svg = Self.chart(scalesPastFirstPoint: false).svg(title: "t")
        #expect(Self.yLabels(svg) == ["0", "1250", "2500", "3750", "5000"])
        #expect(!svg.contains("clipped-label"))
    }

    /// Losses (MRR's churn) hang below a zero line in the middle of an axis as deep as it is high.
    @Test func negativeValuesAreDrawnBelowZero() {
        let svg = StackedChart(
            style: .bars,
            series: [
                ChartSeries(name: "new", color: ChartPalette.green, values: [30, 10]),
                ChartSeries(name: "churn", color: ChartPalette.vermillion, values: [-20, 0]),
            ],
            xLabels: ["m1", "m2"], xTitle: "month", yTitle: "USD"
        ).svg(title: "t")
        #expect(Self.yLabels(svg) == ["-50", "-25", "0", "25", "50"])
        #expect(svg.contains(#"<rect x="98.0" y="60.8" width="272.0" height="73.2" fill="\#(ChartPalette.green)""#))
        #expect(svg.contains(#"<rect x="98.0" y="134.0" width="272.0" height="48.8" fill="\#(ChartPalette.vermillion)""#))
        #expect(svg.components(separatedBy: "<rect").count - 1 == 3)
    }
}
