import Foundation
import SyncKit

/// The CLI's bridge to SyncKit's data-level record editing and reading.
enum RecordAccess {
    static let unavailable = RuntimeError("editing and reading records without Swift types needs RecordEditor, which is not on main yet")

    static func put(_ replica: SyncReplica, entity: String, id: UUID?, values: [(field: String, value: String)]) throws -> UUID {
        throw unavailable
    }

    static func link(_ replica: SyncReplica, entity: String, id: UUID, relationship: String, target: UUID) throws {
        throw unavailable
    }

    static func unlink(_ replica: SyncReplica, entity: String, id: UUID, relationship: String, target: UUID) throws {
        throw unavailable
    }

    static func delete(_ replica: SyncReplica, entity: String, id: UUID) throws {
        throw unavailable
    }

    /// One object as a JSON line, or `nil` when there is none.
    static func record(_ replica: SyncReplica, entity: String, id: UUID) throws -> String? {
        throw unavailable
    }

    /// Every object of `entity` as JSON lines, sorted by id.
    static func records(_ replica: SyncReplica, entity: String) throws -> [String] {
        throw unavailable
    }
}
