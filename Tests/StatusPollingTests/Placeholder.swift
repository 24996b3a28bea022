import Testing
import Hummingbird
@Test func placeholder() { #expect(1 == 1) }
