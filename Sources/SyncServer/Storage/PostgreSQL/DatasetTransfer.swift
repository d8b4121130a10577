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
///
/// A dataset whose log was compacted has lost the change sets before its compaction point, so
/// its export (format version 2) carries a base instead: the header's `base` holds the
/// compaction point and a copy of the store file (base64), and each compacted entry whose change
/// set is gone is a line `{"compactedEntry":{"replica":"<UUID>","seq":N}}`. The import keeps the
/// copy as the dataset's base in PostgreSQL (as a compaction there does), so instances restore it
/// and replay the rest of the log.
///
/// A compacted log whose first entries were folded into a floor (``LogFloor``) is exported as
/// version 3: the base also holds `floor` (cursor, digest and the vector as `replica:seq` pairs),
/// and the lines start with the entry after the floor.
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
        if try engine.compactionPoint() != nil {
            return try exportCompacted(dataset: dataset, engine: engine, to: output)
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
        try output(try header(dataset: dataset, engine: engine, end: end, base: nil))
        for changeSet in changeSets {
            try output(try ChangeSetCoding.encode([changeSet], base: VersionVector()) + Data("\n".utf8))
        }
        return changeSets.count
    }

    /// The header line of an export of `engine`'s dataset whose log ends at `end`; version 2
    /// with `base` (the compaction point and the store file) when the log was compacted, 3 when
    /// the base has a floor.
    private static func header(dataset: String, engine: SQLiteDatasetEngine, end: LogPosition,
                               base: (point: LogPosition, store: Data, floor: LogFloor?)?) throws -> Data {
        var keys: [String: String] = [:]
        for credentials in try engine.registeredReplicaKeys() { keys[credentials.replica.storageText] = LowercaseHex.encode(credentials.key) }
        // Oldest first, each as base64 with its time in milliseconds (null when unknown).
        let versions: [[String: Any]] = try engine.schemaVersions().map { version in
            ["schema": try version.schema.jsonData().base64EncodedString(),
             "registeredAt": version.registeredAt.map { NSNumber(value: Int64(($0.timeIntervalSince1970 * 1000).rounded())) } ?? NSNull()]
        }
        var header: [String: Any] = [
            "format": format, "version": base == nil ? 1 : base?.floor == nil ? 2 : 3, "dataset": dataset, "schema": try engine.schema.jsonData().base64EncodedString(),
            "schemaVersions": versions, "replicaKeys": keys, "cursor": String(end.cursor), "digest": end.digest.description,
        ]
        if let base {
            var fields: [String: Any] = ["cursor": String(base.point.cursor), "digest": base.point.digest.description,
                                         "store": base.store.base64EncodedString()]
            if let floor = base.floor {
                fields["floor"] = ["cursor": String(floor.position.cursor), "digest": floor.position.digest.description,
                                   "vector": ReplicaRegistry.text(of: floor.vector)]
            }
            header["base"] = fields
        }
        return try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]) + Data("\n".utf8)
    }

    /// Writes the export of a compacted dataset (format version 2, see the type) from a copy of
    /// its store file, so that the base and the log are those of one moment while syncd serves.
    private static func exportCompacted(dataset: String, engine: SQLiteDatasetEngine, to output: (Data) throws -> Void) throws -> Int {
        let copyPath = engine.path + ".export-\(UUID().uuidString)"
        defer {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copyPath + suffix) }
        }
        try engine.copyStoreFile(to: copyPath)
        let store = try Data(contentsOf: URL(fileURLWithPath: copyPath))
        guard let copy = try SQLiteDatasetEngine.open(at: copyPath), let point = try copy.compactionPoint() else {
            throw TransferError(description: "dataset '\(dataset)': the copy of its store file has no schema or no compaction point")
        }
        // Entries first, then written: the header names the end of exactly the log that follows.
        var lines: [Data] = []
        var end: LogPosition?
        var changeSets = 0
        let floor = try copy.forEachLogEntry { entry, changeSet in
            if let changeSet {
                lines.append(try ChangeSetCoding.encode([changeSet], base: VersionVector()))
                changeSets += 1
            } else {
                let compacted: [String: Any] = ["compactedEntry": ["replica": entry.dot.replica.storageText, "seq": NSNumber(value: entry.dot.seq)]]
                lines.append(try JSONSerialization.data(withJSONObject: compacted, options: [.sortedKeys]))
            }
            end = LogPosition(cursor: entry.cursor, digest: entry.digest)
        }
        let logEnd = end ?? floor?.position ?? LogPosition(cursor: 0, digest: .empty)
        try output(try header(dataset: dataset, engine: copy, end: logEnd, base: (point, store, floor)))
        for line in lines { try output(line + Data("\n".utf8)) }
        return changeSets
    }

    /// Creates `dataset` in the PostgreSQL database at `databaseURL` from an export file, in one
    /// transaction; refuses a dataset that already has a schema there. Returns the number of
    /// change sets imported.
    package static func importDataset(_ dataset: String, from file: Data, databaseURL: String) throws -> Int {
        let lines = file.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        guard let first = lines.first,
              let header = try? JSONSerialization.jsonObject(with: Data(first)) as? [String: Any],
              header["format"] as? String == format, let version = header["version"] as? Int, (1...3).contains(version),
              let schemaText = header["schema"] as? String, let schemaJSON = Data(base64Encoded: schemaText),
              let cursorText = header["cursor"] as? String, let endCursor = Int64(cursorText),
              let digestText = header["digest"] as? String, let endDigest = LogDigest(hex: digestText),
              let keys = header["replicaKeys"] as? [String: String] else {
            throw TransferError(description: "the file is not a syncd dataset export (its first line is not a version 1, 2 or 3 header)")
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
        let base = try readBase(header, version: version)
        var entries: [(LogEntry, ChangeSet?)] = []
        let start = base?.floor?.position ?? LogPosition(cursor: 0, digest: .empty)
        var position = start
        for line in lines.dropFirst() {
            let (dot, changeSet) = try readEntry(Data(line), lineNumber: entries.count + 2, compactedAllowed: base != nil)
            position = LogPosition(cursor: position.cursor + 1, digest: position.digest.appending(dot))
            if changeSet == nil, let base, position.cursor > base.point.cursor {
                throw TransferError(description: "line \(entries.count + 2) of the export is a compacted entry after the compaction point \(base.point.cursor)")
            }
            entries.append((LogEntry(cursor: position.cursor, dot: dot, digest: position.digest), changeSet))
        }
        guard position.cursor == endCursor, position.digest == endDigest else {
            throw TransferError(description: "the export of '\(dataset)' is incomplete or damaged: its change sets end at cursor \(position.cursor) with digest \(position.digest), its header at \(endCursor) with \(endDigest)")
        }
        if let base {
            let atPoint = base.point.cursor == start.cursor ? start.digest
                : entries.first { $0.0.cursor == base.point.cursor }?.0.digest
            guard base.point.cursor >= start.cursor, atPoint == base.point.digest else {
                throw TransferError(description: "the export of '\(dataset)' is damaged: its log does not pass through its base's compaction point \(base.point.cursor)")
            }
        }
        // Every batch was accepted by the exporting server; checked again here so that a damaged
        // file fails before anything is written.
        _ = try ValidatedBatch(validating: entries.compactMap(\.1), against: schema)
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
            if let base {
                _ = try PostgreSQLTables.compact(dataset, through: base.point, base: [UInt8](base.store), on: connection)
                if let floor = base.floor { try PostgreSQLTables.setFloor(floor, of: dataset, on: connection) }
            }
        }
        return entries.compactMap(\.1).count
    }

    /// The header's `base` of a version 2 or 3 export: the compaction point and the store file,
    /// and (version 3) the floor.
    private static func readBase(_ header: [String: Any], version: Int) throws -> (point: LogPosition, store: Data, floor: LogFloor?)? {
        guard version >= 2 else { return nil }
        guard let base = header["base"] as? [String: Any], let point = position(in: base),
              let storeText = base["store"] as? String, let store = Data(base64Encoded: storeText) else {
            throw TransferError(description: "the version \(version) export's base (compaction point and store file) is missing or damaged")
        }
        guard version == 3 else { return (point, store, nil) }
        guard let fields = base["floor"] as? [String: Any], let floor = position(in: fields), floor.cursor <= point.cursor,
              let vectorText = fields["vector"] as? String, let vector = ReplicaRegistry.vector(fromText: vectorText) else {
            throw TransferError(description: "the version 3 export's floor (cursor, digest and vector, at or before the compaction point) is missing or damaged")
        }
        return (point, store, LogFloor(position: floor, vector: vector))
    }

    /// The `cursor` (a positive integer as text) and `digest` of a header object.
    private static func position(in fields: [String: Any]) -> LogPosition? {
        guard let cursorText = fields["cursor"] as? String, let cursor = Int64(cursorText), cursor > 0,
              let digestText = fields["digest"] as? String, let digest = LogDigest(hex: digestText) else { return nil }
        return LogPosition(cursor: cursor, digest: digest)
    }

    /// One line after the header: a logged change set, or (in a version 2 export) a compacted
    /// entry whose change set is gone, as its dot.
    private static func readEntry(_ line: Data, lineNumber: Int, compactedAllowed: Bool) throws -> (Dot, ChangeSet?) {
        if compactedAllowed, line.starts(with: Data(#"{"compactedEntry""#.utf8)) {
            guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
                  let entry = object["compactedEntry"] as? [String: Any], let replicaText = entry["replica"] as? String,
                  let replica = UUID(storageText: replicaText), let seq = (entry["seq"] as? NSNumber)?.uint64Value, seq > 0 else {
                throw TransferError(description: "line \(lineNumber) of the export is a damaged compacted entry")
            }
            return (Dot(replica: replica, seq: seq), nil)
        }
        let decoded = try ChangeSetCoding.decode(line).changeSets
        guard decoded.count == 1 else {
            throw TransferError(description: "line \(lineNumber) of the export holds \(decoded.count) change sets, not one")
        }
        return (decoded[0].dot, decoded[0])
    }
}
