/// Why no bearer token could be made: the run cannot ask the Server API anything.
public enum BearerTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The header or claims did not encode (never seen: they are fixed shapes of strings and integers).
    case encoding(String)
    /// The In-App Purchase key did not sign.
    case signing(String)

    public var description: String {
        switch self {
        case .encoding(let why): "the Server API's bearer token could not be encoded (\(why))"
        case .signing(let why): "the In-App Purchase key could not sign the Server API's bearer token (\(why)): check the .p8 file (APPSTORE_PRIVATE_KEY or --private-key-file)"
        }
    }
}
