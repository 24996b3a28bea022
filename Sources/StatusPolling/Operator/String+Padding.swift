/// Column alignment for the operator commands' tables.
extension String {
    package func padded(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
    package func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
