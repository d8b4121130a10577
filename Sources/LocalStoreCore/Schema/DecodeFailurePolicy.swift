import Foundation
import SQLiteDatabase

/// What a fetch does when an attribute's stored value no longer decodes as its Swift type (for
/// example a `.codable` value whose type changed since it was written, or a `.raw` value
/// without a matching case). Declared with `@Attribute(decodeFailure:)`.
///
/// ```swift
/// @Attribute(storage: .codable, decodeFailure: .fallbackToDefaultValue) var layout: Layout = Layout()
/// @Attribute(storage: .codable, decodeFailure: .debugAssertNil) var draft: Draft? = nil
/// ```
public enum DecodeFailurePolicy: Sendable, Hashable {
    /// The fetch (or refresh, or relationship load) throws ``StoreError`` `.corruptValue` naming
    /// the entity, attribute and object. The default.
    case throwError
    /// The object gets the attribute's default value (the one its declaration gives), and the
    /// stored value stays in the file until the object is saved.
    case fallbackToDefaultValue
    /// For optional attributes: the object gets `nil`, and debug builds stop at an assertion
    /// naming the entity, attribute and object. Release builds go on silently. `@Attribute`
    /// refuses it on a non-optional property; a description written by hand that gives it to
    /// one gets ``fallbackToDefaultValue``.
    case debugAssertNil
}

/// Where ``DecodeFailurePolicy/debugAssertNil`` reports a value that did not decode.
package enum DecodeFailureAssertion {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var handler: (@Sendable (StoreError) -> Void)?

    /// Runs `body` with `handler` told about each assertion instead of the assertion stopping
    /// the program: for tests of the policy in debug builds.
    package static func reporting<Result>(to handler: @escaping @Sendable (StoreError) -> Void, _ body: () throws -> Result) rethrows -> Result {
        lock.withLock { self.handler = handler }
        defer { lock.withLock { self.handler = nil } }
        return try body()
    }

    static func fail(_ error: StoreError) {
        if let handler = lock.withLock({ handler }) {
            handler(error)
        } else {
            assertionFailure("LocalStore: \(error)")
        }
    }
}

extension EntityMapping {
    /// Sets `object`'s attribute at `index` from `row` (which selects ``selectList``), applying
    /// the attribute's ``DecodeFailurePolicy`` when the stored value does not decode.
    func decodeAttribute(_ index: Int, of object: any PersistentEntity, from row: StoredRow, objectID: UUID) throws {
        let offset = 1 + attributeColumnOffsets[index]
        do {
            try decodeAttributeValue(index, of: object, from: row, at: offset)
            return
        } catch {
            let attribute = description.attributes[index]
            let failure = StoreError(
                .corruptValue, "cannot read \(name).\(attribute.name) of \(name) \(objectID.storageText): \(error)",
                entity: name, attribute: attribute.name, objectID: objectID)
            switch attribute.decodeFailure {
            case .throwError:
                throw failure
            case .debugAssertNil where attribute.isOptional:
                let nulls = StoredRow(values: Array(repeating: .null, count: attribute.columns.count))
                do { try decodeAttributeValue(index, of: object, from: nulls, at: 0) } catch { try setDefaultValue(index, of: object, failure: failure) }
                DecodeFailureAssertion.fail(failure)
            case .debugAssertNil, .fallbackToDefaultValue:
                try setDefaultValue(index, of: object, failure: failure)
            }
        }
    }

    /// Gives `object` the default value of attribute `index`: the value a newly created object has.
    private func setDefaultValue(_ index: Int, of object: any PersistentEntity, failure: StoreError) throws {
        let fresh = description.entityType.init(_$materializing: MaterializingToken())
        var values: [SQLValue] = []
        do {
            try encodeAttribute(index, of: fresh, into: &values)
            try decodeAttributeValue(index, of: object, from: StoredRow(values: values), at: 0)
        } catch {
            throw failure
        }
    }
}
