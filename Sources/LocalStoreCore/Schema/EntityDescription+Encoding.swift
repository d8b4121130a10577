import Codecs
import Foundation
import SQLiteDatabase

extension EntityDescription {
    /// Appends the SQL values of the attribute at `index` of `object`.
    ///
    /// - Throws: ``StoreError`` `.unencodableValue` naming the entity, attribute and object when
    ///   the value has no SQL form (a `.codable` value JSON cannot express).
    func encodeAttribute(_ index: Int, of object: any PersistentEntity, into values: inout [SQLValue]) throws(StoreError) {
        do {
            try attributes[index].accessor.encode(object, into: &values)
        } catch {
            throw unencodable(index, of: object, error)
        }
    }

    /// The error of an attribute value with no SQL form, naming the entity, attribute and object.
    func unencodable(_ index: Int, of object: any PersistentEntity, _ error: ValueEncodingFailure) -> StoreError {
        let attribute = attributes[index].name
        return StoreError(
            .unencodableValue, "\(name).\(attribute) of \(name) \(object.objectID.storageText) cannot be stored: \(error.message)",
            entity: name, attribute: attribute, objectID: object.objectID)
    }
}
