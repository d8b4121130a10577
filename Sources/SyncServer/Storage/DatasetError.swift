import Foundation
import SQLiteDatabase
import SyncEngine

/// A failure of a dataset operation that is not a ``SyncError`` or a ``StoreError``, with what
/// the client needs to recover. Every one of them leaves the dataset unchanged.
package enum DatasetError: Error, Sendable, Equatable {
    /// The dataset has no schema yet: `PUT .../schema` first.
    case schemaNotRegistered(dataset: String)
    /// The schema document cannot be read or is inconsistent.
    case invalidSchema(String)
    /// The registered schema cannot be changed into the offered one.
    case schemaIncompatible(String)
    /// A change set's HLC lies too far ahead of the server's clock.
    case clockSkew(String, serverTime: UInt64)
    /// A batch needs change sets the server does not have; `vector` is what it has.
    case causalityViolation(String, vector: VersionVector)
    /// A pull cursor that is not one this server handed out.
    case invalidCursor(String)
    /// A retired replica, or one silent for longer than the horizon, pushed or pulled.
    case replicaRetired(String)
    /// A pull cursor before the compaction point `logStart` whose puller cannot be shown to have
    /// what was compacted after it: the client starts again from a snapshot.
    case historyCompacted(String, logStart: Int64)
}
