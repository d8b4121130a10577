import Foundation

/// The JSON form of an SQL value, used by the exported schema (default values) and by the sync
/// protocol: `null`, a JSON integer, a JSON string, `{"real": 1.5}` or `{"blob": "<base64>"}`.
///
/// Reals are wrapped so that `1.0` does not come back as the integer `1`.
extension SQLValue: Codable {
    private enum Keys: String, CodingKey { case real, blob }

    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.singleValueContainer() {
            if container.decodeNil() { self = .null; return }
            if let integer = try? container.decode(Int64.self) { self = .integer(integer); return }
            if let text = try? container.decode(String.self) { self = .text(text); return }
        }
        let keyed = try decoder.container(keyedBy: Keys.self)
        if let real = try keyed.decodeIfPresent(Double.self, forKey: .real) { self = .real(real); return }
        if let blob = try keyed.decodeIfPresent(String.self, forKey: .blob) {
            guard let data = Data(base64Encoded: blob) else {
                throw DecodingError.dataCorruptedError(forKey: .blob, in: keyed, debugDescription: "blob is not base64")
            }
            self = .blob(data)
            return
        }
        throw DecodingError.dataCorrupted(.init(
            codingPath: decoder.codingPath, debugDescription: "expected null, an integer, a string, {\"real\": …} or {\"blob\": …}"))
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .integer(let integer):
            var container = encoder.singleValueContainer()
            try container.encode(integer)
        case .text(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .real(let real):
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(real, forKey: .real)
        case .blob(let data):
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(data.base64EncodedString(), forKey: .blob)
        }
    }
}
