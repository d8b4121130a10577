import SQLiteDatabase

/// How an attribute's concurrent writes merge across replicas (`@Attribute(merge:)`).
///
/// ```swift
/// @Attribute(merge: .max) var highScore: Int = 0          // the largest value any replica wrote
/// @Attribute(merge: .min) var firstSeen: Date = .distantFuture
/// @Attribute(merge: .counter) var likes: Int = 0          // increments add up across replicas
/// @Attribute(merge: .custom(TagSet.self)) var tags = TagSet()
/// ```
///
/// Without a policy an attribute merges by last writer wins: the write with the larger
/// `(HLC, replica ID)` stands and the other is journaled.
public struct AttributeMergePolicy: Sendable {
    /// The kinds of policy, as the schema document records them.
    public enum Kind: String, Hashable, Sendable, Codable {
        /// The write with the larger `(HLC, replica ID)` wins.
        case lastWriterWins
        /// The largest value ever written wins, whatever its stamp.
        case max
        /// The smallest value ever written wins, whatever its stamp.
        case min
        /// Saves record increments; the value is the creation value plus every increment.
        case counter
        /// A ``MergeableValue`` type's `merge(_:_:)` joins the values.
        case custom
    }

    /// Which policy this is.
    public let kind: Kind
    /// For ``Kind/custom``, the name of the ``MergeableValue`` type.
    public let customTypeName: String?
    /// For ``Kind/custom``, the type's `merge(_:_:)` over type-erased values; `nil` when the
    /// values are not of the type.
    let customMerge: (@Sendable (Any, Any) -> Any?)?

    private init(kind: Kind, customTypeName: String? = nil, customMerge: (@Sendable (Any, Any) -> Any?)? = nil) {
        self.kind = kind
        self.customTypeName = customTypeName
        self.customMerge = customMerge
    }

    /// The default: the write with the larger `(HLC, replica ID)` wins.
    public static let lastWriterWins = AttributeMergePolicy(kind: .lastWriterWins)
    /// The largest value ever written, compared as SQLite compares the stored values.
    public static let max = AttributeMergePolicy(kind: .max)
    /// The smallest value ever written, compared as SQLite compares the stored values.
    public static let min = AttributeMergePolicy(kind: .min)
    /// An integer whose saves record increments: two replicas each adding 1 to 10 give 12.
    public static let counter = AttributeMergePolicy(kind: .counter)

    /// Values joined by `Value.merge(_:_:)` on every replica that has the type.
    public static func custom<Value: MergeableValue>(_ type: Value.Type) -> AttributeMergePolicy {
        AttributeMergePolicy(kind: .custom, customTypeName: "\(Value.self)") { first, second in
            guard let first = first as? Value, let second = second as? Value else { return nil }
            return Value.merge(first, second)
        }
    }
}

/// A value that merges concurrent writes itself, for `@Attribute(merge: .custom(Self.self))`:
/// a state-based CRDT such as a grow-only set or a map of per-replica maxima.
///
/// `merge(_:_:)` must be a join: **commutative** (`merge(a, b) == merge(b, a)`), **associative**
/// (`merge(merge(a, b), c) == merge(a, merge(b, c))`) and **idempotent** (`merge(a, a) == a`).
/// Then every replica that applies the same change sets, in any order and batching and with
/// duplicates, ends with the same value.
///
/// ```swift
/// struct TagSet: MergeableValue, Codable {
///     var tags: Set<String> = []
///     static func merge(_ first: TagSet, _ second: TagSet) -> TagSet { TagSet(tags: first.tags.union(second.tags)) }
/// }
/// ```
public protocol MergeableValue: SendableMetatype {
    /// The join of two values: commutative, associative and idempotent.
    static func merge(_ first: Self, _ second: Self) -> Self
}

extension SQLValue {
    /// Whether `self` sorts before `other` as SQLite's `ORDER BY` sorts them (binary collation):
    /// `NULL`, then numbers by value, then text by UTF-8 bytes, then blobs by bytes. This is the
    /// order `.max` and `.min` merge by, on every replica alike.
    package func precedesInSQLiteOrder(_ other: SQLValue) -> Bool {
        switch (self, other) {
        case (.integer(let left), .integer(let right)): return left < right
        case (.integer(let left), .real(let right)): return Double(left) < right
        case (.real(let left), .integer(let right)): return left < Double(right)
        case (.real(let left), .real(let right)): return left < right
        case (.text(let left), .text(let right)): return left.utf8.lexicographicallyPrecedes(right.utf8)
        case (.blob(let left), .blob(let right)): return left.lexicographicallyPrecedes(right)
        default: return sqliteClassRank < other.sqliteClassRank
        }
    }

    private var sqliteClassRank: Int {
        switch self {
        case .null: 0
        case .integer, .real: 1
        case .text: 2
        case .blob: 3
        }
    }
}

extension [SQLValue] {
    /// Column-by-column ``SQLValue/precedesInSQLiteOrder(_:)``: the first column that differs decides.
    package func precedesInSQLiteOrder(_ other: [SQLValue]) -> Bool {
        for (left, right) in zip(self, other) where left != right {
            if left.precedesInSQLiteOrder(right) { return true }
            if right.precedesInSQLiteOrder(left) { return false }
        }
        return count < other.count
    }
}
