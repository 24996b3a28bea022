/// One series of a chart: its name in the legend, its colour, a value per point on the x axis.
public struct ChartSeries: Sendable {
    public var name: String
    public var color: String
    public var values: [Double]

    public init(name: String, color: String, values: [Double]) {
        self.name = name
        self.color = color
        self.values = values
    }
}
