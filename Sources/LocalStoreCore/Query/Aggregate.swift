import Foundation
import SQLiteDatabase

/// A count, minimum, maximum or sum of one attribute, computed by SQLite over the objects a
/// ``FetchDescriptor`` matches, typed by the attribute.
///
/// Only attributes with default storage qualify (not `.raw`, `.codable` or `.composition`);
/// minimum, maximum and sum also refuse `Decimal`, which is stored as text.
///
/// ```swift
/// let best: Double? = try context.aggregate(.maximum(\Person.score))
/// let total: Int = try context.aggregate(.sum(\Order.quantity), matching: FetchDescriptor(predicate: #Predicate { $0.open }))
/// let withScore: Int = try context.aggregate(.count(\Person.score))   // objects whose score is not nil
/// ```
public struct Aggregate<Entity: PersistentEntity, Result>: Sendable {
    enum Function: String, Sendable {
        case count = "COUNT", minimum = "MIN", maximum = "MAX", sum = "SUM"
    }

    let function: Function
    let keyPath: AnyKeyPath & Sendable
    let decode: @Sendable (SQLValue) throws(ValueDecodingFailure) -> Result

    /// The number of matching objects whose attribute is not `nil`.
    ///
    /// ```swift
    /// let scored = try context.aggregate(.count(\Person.score))
    /// ```
    public static func count<Value>(_ keyPath: KeyPath<Entity, Value> & Sendable) -> Aggregate<Entity, Int> {
        Aggregate<Entity, Int>(function: .count, keyPath: keyPath) { value throws(ValueDecodingFailure) in try Int.decode(value) }
    }

    /// The smallest value, `nil` when no object matches.
    ///
    /// ```swift
    /// let earliest: Date? = try context.aggregate(.minimum(\Person.joined))
    /// ```
    public static func minimum<Value: Comparable & AttributeValue>(_ keyPath: KeyPath<Entity, Value> & Sendable) -> Aggregate<Entity, Value?> {
        Aggregate<Entity, Value?>(function: .minimum, keyPath: keyPath) { value throws(ValueDecodingFailure) in try Value?.decode(value) }
    }

    /// The smallest non-`nil` value, `nil` when there is none.
    ///
    /// ```swift
    /// let lowest: Double? = try context.aggregate(.minimum(\Person.score))   // score: Double?
    /// ```
    public static func minimum<Value: Comparable & AttributeValue>(_ keyPath: KeyPath<Entity, Value?> & Sendable) -> Aggregate<Entity, Value?> {
        Aggregate<Entity, Value?>(function: .minimum, keyPath: keyPath) { value throws(ValueDecodingFailure) in try Value?.decode(value) }
    }

    /// The largest value, `nil` when no object matches.
    ///
    /// ```swift
    /// let latest: Date? = try context.aggregate(.maximum(\Person.joined))
    /// ```
    public static func maximum<Value: Comparable & AttributeValue>(_ keyPath: KeyPath<Entity, Value> & Sendable) -> Aggregate<Entity, Value?> {
        Aggregate<Entity, Value?>(function: .maximum, keyPath: keyPath) { value throws(ValueDecodingFailure) in try Value?.decode(value) }
    }

    /// The largest non-`nil` value, `nil` when there is none.
    ///
    /// ```swift
    /// let highest: Double? = try context.aggregate(.maximum(\Person.score))
    /// ```
    public static func maximum<Value: Comparable & AttributeValue>(_ keyPath: KeyPath<Entity, Value?> & Sendable) -> Aggregate<Entity, Value?> {
        Aggregate<Entity, Value?>(function: .maximum, keyPath: keyPath) { value throws(ValueDecodingFailure) in try Value?.decode(value) }
    }

    /// The sum of the values, zero when no object matches. An integer sum that overflows
    /// `Int64` throws (SQLite reports it); floating-point sums may differ from a Swift loop
    /// in the last bits, as SQLite adds with extra precision.
    ///
    /// ```swift
    /// let items: Int = try context.aggregate(.sum(\Order.quantity))
    /// ```
    public static func sum<Value: AdditiveArithmetic & AttributeValue>(_ keyPath: KeyPath<Entity, Value> & Sendable) -> Aggregate<Entity, Value> {
        Aggregate<Entity, Value>(function: .sum, keyPath: keyPath) { value throws(ValueDecodingFailure) in
            value.isNull ? .zero : try Value.decode(value)
        }
    }

    /// The sum of the non-`nil` values, zero when there are none.
    ///
    /// ```swift
    /// let points: Double = try context.aggregate(.sum(\Person.score))   // score: Double?
    /// ```
    public static func sum<Value: AdditiveArithmetic & AttributeValue>(_ keyPath: KeyPath<Entity, Value?> & Sendable) -> Aggregate<Entity, Value> {
        Aggregate<Entity, Value>(function: .sum, keyPath: keyPath) { value throws(ValueDecodingFailure) in
            value.isNull ? .zero : try Value.decode(value)
        }
    }

    /// The SQL expression over `alias`'s row, checking that the attribute can be aggregated.
    func sqlExpression(mapping: EntityMapping, column alias: String) throws -> (column: String, attribute: AttributeDescription) {
        let entity = mapping.description
        guard let attribute = entity.attribute(for: keyPath) else {
            throw StoreError(.unsupportedQuery, "cannot aggregate \(keyPath): it is not a stored attribute of \(entity.name)", entity: entity.name)
        }
        guard attribute.storage == .default, let column = attribute.columns.first else {
            throw StoreError(.unsupportedQuery, "cannot aggregate \(entity.name).\(attribute.name): it is stored with \(attribute.storage) storage",
                             entity: entity.name, attribute: attribute.name)
        }
        if function != .count && column.type == .decimal {
            throw StoreError(.unsupportedQuery, "cannot compute \(function.rawValue) of \(entity.name).\(attribute.name): Decimal is stored as text, which SQL would order and add wrongly",
                             entity: entity.name, attribute: attribute.name)
        }
        return (alias + "." + quotedName(column.name), attribute)
    }
}
