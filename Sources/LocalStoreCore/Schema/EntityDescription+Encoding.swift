import Codecs
import Foundation
import SQLiteDatabase

extension EntityDescription {
    /// Appends the SQL values of the attribute at `index` of `object`.
    ///
    /// - Throws: ``StoreError`` `.unencodableValue` naming the entity, attribute and object when
    ///   the value has no SQL form (a `.codable` value JSON cannot express).
    func encodeAttribute(_ index: Int, of object: any PersistentEntity, into values: inout [SQLValue]) throws(StoreError) {
        try encodeAttribute(index, with: attributes[index].accessor, of: object, into: &values)
    }

    /// ``encodeAttribute(_:of:into:)`` through the attribute's accessor when the caller has it
    /// at hand: the per-object loops of a save go through ``EntityMapping/attributeAccessors``
    /// rather than copying each attribute's description.
    @inline(__always)
    func encodeAttribute(
        _ index: Int, with accessor: any AttributeAccessing, of object: any PersistentEntity, into values: inout [SQLValue]
    ) throws(StoreError) {
        do {
            try accessor.encode(object, into: &values)
        } catch {
            let attribute = attributes[index].name
            throw StoreError(
                .unencodableValue, "\(name).\(attribute) of \(name) \(object.objectID.storageText) cannot be stored: \(error.message)",
                entity: name, attribute: attribute, objectID: object.objectID)
        }
    }
}
