/// Okabe and Ito's eight colours, told apart with every common colour-vision deficiency, and
/// readable on the page's light and dark backgrounds alike.
public enum ChartPalette {
    public static let orange = "#E69F00"
    public static let sky = "#56B4E9"
    public static let green = "#009E73"
    public static let yellow = "#F0E442"
    public static let blue = "#0072B2"
    public static let vermillion = "#D55E00"
    public static let purple = "#CC79A7"
    public static let grey = "#999999"
}
