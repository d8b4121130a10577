import Codecs
import Foundation
import SQLiteDatabase

/// The parameters of the statement an insert binds one row to, as attribute encoding writes
/// them: the counterpart of ``StoredRow``.
///
/// An insert hands each attribute the statement itself rather than collecting ``SQLValue``s
/// first, so a `String` attribute is bound from its own storage and a `UUID` from text written
/// on the stack, with no value, array or string made per row in between (see
/// ``AttributeValue/bind(to:at:)``).
///
/// Indices are those of the row's columns, the identifier column first (parameter `index + 1`).
/// A binding is valid only during the call it is passed to.
public struct RowBinding {
    /// Unretained, as ``StoredRow``'s statement: the insert holds the statement while it binds.
    private let statement: Unmanaged<SQLiteStatement>

    /// The parameters of `statement`.
    init(statement: SQLiteStatement) {
        self.statement = Unmanaged.passUnretained(statement)
    }

    /// Binds `value` to the parameter of column `index`.
    public func bind(_ value: SQLValue, at index: Int) throws {
        try statement._withUnsafeGuaranteedRef { try $0.bind(value, at: Int32(index + 1)) }
    }

    /// Binds `text` to the parameter of column `index`, from the string's own storage.
    func bind(text: String, at index: Int) throws {
        try statement._withUnsafeGuaranteedRef { try $0.bind(text: text, at: Int32(index + 1)) }
    }

    /// Binds `id`'s storage text to the parameter of column `index`, written on the stack.
    func bind(storageTextOf id: UUID, at index: Int) throws {
        try statement._withUnsafeGuaranteedRef { try $0.bind(storageTextOf: id, at: Int32(index + 1)) }
    }
}
