/// One value of a JSON object, as strict as Apple's parser: a Boolean is not a number.
enum JSONScalar: Decodable, Equatable {
    case bool(Bool)
    case number(Double)
    case string(String)
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else {
            self = .other
        }
    }
}
