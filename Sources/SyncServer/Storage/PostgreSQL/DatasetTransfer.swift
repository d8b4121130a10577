import Codecs
import Foundation
import LocalStoreCore
import PostgreSQLClient
import SyncEngine

/// Moves a dataset from SQLite storage (a data directory) to PostgreSQL storage, through a file:
/// `syncd dataset export` writes it, `syncd dataset import` reads it.
///
/// The file is text, one JSON object per line: first a header (format, dataset, the schema
/// document as base64, the schema history, the registered replica keys, and the log's end:
/// cursor and digest), then
/// each logged change set in log order, as a one-change-set batch of the wire format. The
/// imported log gets the same cursors and digests, so clients keep pulling where they were.
package enum DatasetTransfer {
    /// The header's `format`.
    static let format = "syncd-dataset"

    /// A failure to read an export file or to import it, naming the dataset.
    package struct TransferError: Error, CustomStringConvertible {
        package var description: String
    }

    /// Writes `dataset` of the SQLite storage in `dataDirectory` as an export file to `output`.
    /// Returns the number of change sets written.
    package static func export(dataset: String, dataDirectory: URL, to output: (Data) throws -> Void) throws -> Int {
        let provider = SQLiteDatasetEngineProvider(directory: DatasetRegistry.datasetsDirectory(in: dataDirectory))
        guard let engine = try SQLiteDatasetEngine.open(at: provider.storePath(of: dataset)) else {
            throw TransferError(description: "dataset '\(dataset)' has no schema in \(dataDirectory.path)")
        }
        // Read first, then written: the header names the end of exactly the log that follows.
        var changeSets: [ChangeSet] = []
        var end = LogPosition(cursor: 0, digest: .empty)
        var more = true
        while more {
            let page = try engine.readLog(after: end.cursor, limit: 1000, excluding: nil)
            guard page.cursor - end.cursor == Int64(page.changeSets.count) else {
                throw TransferError(description: "dataset '\(dataset)': the log's cursors after \(end.cursor) are not consecutive; it cannot keep its cursors elsewhere")
            }
            changeSets += page.changeSets
            end = LogPosition(cursor: page.cursor, digest: page.digest)
            more = page.hasMore
        }
        var keys: [String: String] = [:]
        for credentials in try engine.registeredReplicaKeys() { keys[credentials.replica.storageText] = LowercaseHex.encode(credentials.key) }
        // Oldest first, each as base64 with its time in milliseconds (null when unknown).
        let versions: [[String: Any]] = try engine.schemaVersions().map { version in
            ["schema": try version.schema.jsonData().base64EncodedString(),
             "registeredAt": version.registeredAt.map { NSNumber(value: Int64(($0.timeIntervalSince1970 * 1000).rounded())) } ?? NSNull()]
        }
        let header: [String: Any] = [
            "format": format, "version": 1, "dataset": dataset, "schema": try engine.schema.jsonData().base64EncodedString(),
            "schemaVersions": versions, "replicaKeys": keys, "cursor": String(end.cursor), "digest": end.digest.description,
        ]
        try output(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]) + Data("\n".utf8))
        for changeSet in changeSets {
            try output(try ChangeSetCoding.encode([changeSet], base: VersionVector()) + Data("\n".utf8))
        }
        return changeSets.count
    }

    /// Creates `dataset` in the PostgreSQL database at `databaseURL` from an export file, in one
    /// transaction; refuses a dataset that already has a schema there. Returns the number of
    /// change sets imported.
    package static func importDataset(_ dataset: String, from file: Data, databaseURL: String) throws -> Int {
        let lines = file.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        guard let first = lines.first,
              let header = try? JSONSerialization.jsonObject(with: Data(first)) as? [String: Any],
              header["format"] as? String == format, header["version"] as? Int == 1,
              let schemaText = header["schema"] as? String, let schemaJSON = Data(base64Encoded: schemaText),
              let cursorText = header["cursor"] as? String, let endCursor = Int64(cursorText),
              let digestText = header["digest"] as? String, let endDigest = LogDigest(hex: digestText),
              let keys = header["replicaKeys"] as? [String: String] else {
            throw TransferError(description: "the file is not a syncd dataset export (its first line is not a version 1 header)")
        }
        let schema = try SchemaDocument(jsonData: schemaJSON)
        // The history (absent from exports of servers that kept none): every version before
        // the current one, with the time its server first held it.
        var history: [SchemaVersion] = []
        for (index, entry) in ((header["schemaVersions"] as? [[String: Any]]) ?? []).enumerated() {
            guard let text = entry["schema"] as? String, let json = Data(base64Encoded: text),
                  let version = try? SchemaDocument(jsonData: json) else {
                throw TransferError(description: "the export's schema version \(index + 1) is damaged")
            }
            let registeredAt = (entry["registeredAt"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue / 1000) }
            history.append(SchemaVersion(schema: version, registeredAt: registeredAt))
        }
        if let last = history.last, last.schema.versionHash != schema.versionHash {
            throw TransferError(description: "the export's schema history does not end with its schema \(schema.versionHash)")
        }
        var entries: [(MirroredLogEntry, ChangeSet)] = []
        var position = LogPosition(cursor: 0, digest: .empty)
        for line in lines.dropFirst() {
            let decoded = try ChangeSetCoding.decode(Data(line)).changeSets
            guard decoded.count == 1 else {
                throw TransferError(description: "line \(entries.count + 2) of the export holds \(decoded.count) change sets, not one")
            }
            position = LogPosition(cursor: position.cursor + 1, digest: position.digest.appending(decoded[0].dot))
            entries.append((MirroredLogEntry(cursor: position.cursor, dot: decoded[0].dot, digest: position.digest), decoded[0]))
        }
        guard position.cursor == endCursor, position.digest == endDigest else {
            throw TransferError(description: "the export of '\(dataset)' is incomplete or damaged: its change sets end at cursor \(position.cursor) with digest \(position.digest), its header at \(endCursor) with \(endDigest)")
        }
        // Every batch was accepted by the exporting server; checked again here so that a damaged
        // file fails before anything is written.
        _ = try ValidatedBatch(validating: entries.map(\.1), against: schema)
        let connection = try PostgreSQLConnection(url: databaseURL)
        try PostgreSQLTables.install(on: connection)
        try connection.inTransaction {
            try PostgreSQLTables.lockDataset(dataset, on: connection)
            if try PostgreSQLTables.schema(of: dataset, on: connection) != nil {
                throw TransferError(description: "dataset '\(dataset)' already exists in \(connection.displayURL); import only creates datasets")
            }
            for version in history.dropLast() {
                try PostgreSQLTables.appendSchemaHistory(version.schema, of: dataset, registeredAt: version.registeredAt, on: connection)
            }
            try PostgreSQLTables.setSchema(schema, of: dataset, registeredAt: history.last?.registeredAt, on: connection)
            for (replicaText, keyText) in keys.sorted(by: { $0.key < $1.key }) {
                guard let replica = UUID(storageText: replicaText), let key = LowercaseHex.decode(keyText),
                      key.count == ReplicaCredentials.keyLength else {
                    throw TransferError(description: "the export's key of replica \(replicaText) is damaged")
                }
                try PostgreSQLTables.registerReplicaKey(ReplicaCredentials(replica: replica, key: key), in: dataset, on: connection)
            }
            try PostgreSQLTables.append(entries.map { (entry: $0.0, changeSet: $0.1) }, of: dataset, on: connection)
        }
        return entries.count
    }
}
