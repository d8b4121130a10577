import Codecs
import Foundation

/// An error from LocalStore, with what was being done and on what.
///
/// ```swift
/// do { try context.save() } catch let error as StoreError where error.code == .deleteDenied {
///     print(error.relationship!)   // "books"
/// }
/// ```
public struct StoreError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure this is.
    public enum Code: String, Sendable, Hashable {
        /// The file is not an SQLite database (or is encrypted or damaged in its header).
        case notADatabase
        /// The file or its directory cannot be written.
        case readOnly
        /// Another connection holds a lock for longer than the busy timeout.
        case locked
        /// The disk (or the file system's quota) is full; the statement's transaction was rolled
        /// back and the file is intact. Retrying works once space is freed.
        case diskFull
        /// The database reports corruption.
        case corrupt
        /// A stored value cannot become the declared Swift value.
        case corruptValue
        /// A Swift value cannot be stored (a `.codable` value JSON cannot express, such as one
        /// holding a non-finite `Double`).
        case unencodableValue
        /// The entity types do not form a valid schema (e.g. an inverse that does not point back).
        case invalidSchema
        /// The stored schema cannot be migrated to the declared one (e.g. a type change).
        case migrationImpossible
        /// A stage of a `SchemaMigrationPlan` failed with an error that is not a ``StoreError`` (one
        /// its `willMigrate` or `didMigrate` closure threw); the message names the stage and the error.
        case migrationFailed
        /// A delete is refused by a `.deny` delete rule.
        case deleteDenied
        /// Two objects hold the same value of a `.unique` attribute.
        case uniqueViolation
        /// A relationship has fewer than `minCount` or more than `maxCount` members.
        case countViolation
        /// The object is not registered in this context, or was deleted.
        case objectNotFound
        /// The object belongs to another context.
        case wrongContext
        /// A query uses a construct LocalStore cannot run as SQL.
        case unsupportedQuery
        /// Any other SQLite error.
        case sqlite
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence saying what went wrong.
    public var message: String
    /// The entity concerned.
    public var entity: String?
    /// The attribute concerned.
    public var attribute: String?
    /// The relationship concerned.
    public var relationship: String?
    /// The object concerned.
    public var objectID: UUID?
    /// The SQL that failed.
    public var sql: String?
    /// SQLite's extended result code, when SQLite reported the error.
    public var sqliteCode: Int32?
    /// The database file.
    public var path: String?

    /// An error with `code` and `message`, naming what it concerns.
    public init(
        _ code: Code, _ message: String, entity: String? = nil, attribute: String? = nil,
        relationship: String? = nil, objectID: UUID? = nil, sql: String? = nil, sqliteCode: Int32? = nil, path: String? = nil
    ) {
        self.code = code
        self.message = message
        self.entity = entity
        self.attribute = attribute
        self.relationship = relationship
        self.objectID = objectID
        self.sql = sql
        self.sqliteCode = sqliteCode
        self.path = path
    }

    public var description: String {
        var parts = ["\(code.rawValue): \(message)"]
        if let entity { parts.append("entity: \(entity)") }
        if let attribute { parts.append("attribute: \(attribute)") }
        if let relationship { parts.append("relationship: \(relationship)") }
        if let objectID { parts.append("object: \(objectID.storageText)") }
        if let sqliteCode { parts.append("SQLite code: \(sqliteCode)") }
        if let path { parts.append("file: \(path)") }
        if let sql { parts.append("SQL: \(sql)") }
        return parts.joined(separator: "; ")
    }
}
