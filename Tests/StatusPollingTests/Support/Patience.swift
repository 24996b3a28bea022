/// How long a test waits for something that must come, on any machine.
///
/// Longer than the whole suite takes on a CI machine busy with two builds (about ten minutes):
/// one exchange can wait nearly that long there, because hundreds of tests share two cooperative
/// threads and each step of an exchange waits its turn behind them (a CONNECT refused at once by
/// the tests' proxy took over two minutes to come back). Only a bug waits this long. A test that
/// needs a timeout to fire uses a short one, on something that never comes (`.never`).
enum Patience {
    static let bound: Duration = .seconds(1800)
    static var boundSeconds: Int { Int(bound.components.seconds) }
}
