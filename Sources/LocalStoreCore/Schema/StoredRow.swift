import Codecs
import Foundation
import SQLiteDatabase

/// The columns of one stored row, as attribute decoding reads them: straight from SQLite's
/// current row while a fetch steps through its results, or from SQL values read earlier (a
/// refresh, a rollback, a merge).
///
/// A fetch hands each attribute the statement itself rather than an array of ``SQLValue``s:
/// building that array made a `String` of every text column (a UUID attribute's 36 characters
/// among them) and destroyed it again for every row. The common types read their column where
/// it lies (see ``AttributeValue/decode(_:at:)``); everything else reads ``value(at:)``.
///
/// Column indices are those of the row: a fetch's include the identifier column first. A row
/// read from a statement is valid only during the call it is passed to.
public struct StoredRow {
    /// Where the columns are, in one word. Keep it one word: as a struct of two (an unretained
    /// statement and an array), the row passed through the typed-throws decoding closures of a
    /// release build (Swift 6.3.1) reached the decoders with a garbage column index.
    private enum Source {
        /// The statement whose current row this is. Unretained: a row exists only while its fetch
        /// steps through the statement, which the fetch holds, and a retain and a release of the
        /// statement for every column read were a sixth of a fetch.
        case statement(Unmanaged<SQLiteStatement>)
        case values([SQLValue])
    }

    private let source: Source

    /// The statement's current row; valid until the statement steps or resets.
    init(statement: SQLiteStatement) {
        source = .statement(Unmanaged.passUnretained(statement))
    }

    /// Values already read.
    init(values: [SQLValue]) {
        source = .values(values)
    }

    /// The value of column `index`.
    public func value(at index: Int) -> SQLValue {
        read(index, fromStatement: { $0.value(at: index) }, fromValue: { $0 })
    }

    /// Whether column `index` is SQL `NULL`.
    public func isNull(at index: Int) -> Bool {
        read(index, fromStatement: { $0.isNull(at: index) }, fromValue: \.isNull)
    }

    /// Column `index` when it holds text; `nil` for any other storage class.
    func text(at index: Int) -> String? {
        read(index, fromStatement: { $0.text(at: index) }, fromValue: { if case .text(let text) = $0 { text } else { nil } })
    }

    /// Column `index` when it holds an integer; `nil` for any other storage class.
    func integer(at index: Int) -> Int64? {
        // Storage classes are told apart by pattern: `==` on the other module's enum is a call
        // through its Equatable conformance.
        read(index, fromStatement: { statement in
            guard case .integer = statement.storageClass(at: index) else { return nil }
            return statement.integer(at: index)
        }, fromValue: { if case .integer(let number) = $0 { number } else { nil } })
    }

    /// Column `index` when it holds a real number; `nil` for any other storage class.
    func real(at index: Int) -> Double? {
        read(index, fromStatement: { statement in
            guard case .real = statement.storageClass(at: index) else { return nil }
            return statement.real(at: index)
        }, fromValue: { if case .real(let number) = $0 { number } else { nil } })
    }

    /// Column `index` parsed as a UUID's storage text, without making a `String` of it; `nil`
    /// when it is not one.
    func uuid(at index: Int) -> UUID? {
        read(index, fromStatement: { $0.uuid(at: index) }, fromValue: { if case .text(let text) = $0 { UUID(storageText: text) } else { nil } })
    }

    /// Column `index` read by `fromStatement` from the statement (borrowed, not retained), or by
    /// `fromValue` from its value.
    @inline(__always)
    private func read<Result>(_ index: Int, fromStatement: (SQLiteStatement) -> Result, fromValue: (SQLValue) -> Result) -> Result {
        switch source {
        case .statement(let statement): statement._withUnsafeGuaranteedRef(fromStatement)
        case .values(let values): fromValue(values[index])
        }
    }
}
