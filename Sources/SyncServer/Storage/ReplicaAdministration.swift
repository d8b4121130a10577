import Foundation
import PostgreSQLClient
import SyncEngine

/// The replica registry of a dataset as an operator sees it (`syncd replica list|retire`),
/// read and written in the server's storage while the server may be running: a retirement
/// takes effect at the replica's next push or pull.
public enum ReplicaAdministration {
    /// Where the dataset lives: SQLite files under a data directory, or a PostgreSQL database.
    public enum Storage: Sendable {
        /// `DIR/datasets/<name>/store.sqlite`.
        case dataDirectory(URL)
        /// A database shared by syncd instances (`postgresql://…`).
        case database(String)
    }

    /// Every replica `dataset` heard from or retired, in replica order.
    ///
    /// - Throws: ``ReplicaAdministrationError`` when the dataset has no schema; storage errors.
    public static func replicas(of dataset: String, in storage: Storage) throws -> [ReplicaRecord] {
        switch storage {
        case .dataDirectory(let directory):
            return try sqliteEngine(dataset, directory).replicas()
        case .database(let url):
            let connection = try postgreSQLConnection(dataset, url)
            return try PostgreSQLTables.replicaRecords(of: dataset, on: connection)
        }
    }

    /// Retires `replica` of `dataset`: the server refuses its pushes and pulls with
    /// `410 replica_retired` from its next request on, and the stable vector stops waiting for it.
    public static func retire(_ replica: ReplicaID, of dataset: String, in storage: Storage, at now: Date = Date()) throws {
        switch storage {
        case .dataDirectory(let directory):
            try sqliteEngine(dataset, directory).retire(replica)
        case .database(let url):
            let connection = try postgreSQLConnection(dataset, url)
            try PostgreSQLTables.retireReplica(replica, in: dataset, at: now, on: connection)
        }
    }

    private static func sqliteEngine(_ dataset: String, _ dataDirectory: URL) throws -> SQLiteDatasetEngine {
        let provider = SQLiteDatasetEngineProvider(directory: DatasetRegistry.datasetsDirectory(in: dataDirectory))
        guard let engine = try SQLiteDatasetEngine.open(at: provider.storePath(of: dataset)) else {
            throw ReplicaAdministrationError(message: "the dataset '\(dataset)' has no schema in \(dataDirectory.path)")
        }
        return engine
    }

    private static func postgreSQLConnection(_ dataset: String, _ url: String) throws -> PostgreSQLConnection {
        let connection = try PostgreSQLConnection(url: url)
        try PostgreSQLTables.install(on: connection)
        guard try PostgreSQLTables.schema(of: dataset, on: connection) != nil else {
            throw ReplicaAdministrationError(message: "the dataset '\(dataset)' has no schema in \(PostgreSQLConnection.withoutPassword(url))")
        }
        return connection
    }
}

/// A replica administration that cannot be done, with the reason.
public struct ReplicaAdministrationError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, naming the dataset.
    public var message: String
    public var description: String { message }
}
