/// The positions of an entity's attribute or relationship names, looked up by every generated
/// setter and by merges.
///
/// An entity has a handful of each, and most names fit Swift's small-string form, which
/// compares as two machine words: scanning a few names is quicker than hashing one (each
/// relationship setter looks up two names). Long lists use a dictionary.
struct PropertyNameIndex: Sendable {
    private let names: [String]
    private let positions: [String: Int]

    /// Up to this many names are scanned rather than hashed.
    private static let scanLimit = 8

    /// Indexes `names`; a repeated name resolves to its first position.
    init(_ names: [String]) {
        self.names = names
        positions = names.count > Self.scanLimit
            ? Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            : [:]
    }

    /// The position of `name`, if it is one of the names.
    func position(of name: String) -> Int? {
        guard names.count > Self.scanLimit else { return names.firstIndex(of: name) }
        return positions[name]
    }
}
