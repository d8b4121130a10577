import Codecs
import Foundation
import LocalStoreCore

/// Identifiers (objects' and replicas') are stored in the sync tables as their 16 bytes: less than
/// half of their 36-character text, in every row, key and index of the history. Blobs compare
/// byte by byte, the order of the upper-case text the entity tables store, so an order taken in
/// either is the same.
extension UUID {
    /// The value that stores the identifier in a sync table: its 16 bytes.
    var storedValue: SQLValue { .blob(withUnsafeBytes(of: uuid) { Data($0) }) }

    /// The identifier a sync table's column holds; `nil` if it holds anything but 16 bytes.
    init?(stored value: SQLValue) {
        guard case .blob(let data) = value, data.count == 16 else { return nil }
        self.init(uuid: data.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) })
    }

    /// The identifier in 16 stored bytes; `nil` for any other length.
    init?(storedBytes bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 16 else { return nil }
        self.init(uuid: bytes.loadUnaligned(as: uuid_t.self))
    }
}

extension SQLiteStatement {
    /// The identifier stored in the 0-based column `index` of the current row; `nil` if the
    /// column holds anything but 16 bytes.
    func identifier(at index: Int) -> UUID? {
        UUID(storedBytes: blobBytes(at: index))
    }

    /// Binds `id` as stored (its 16 bytes) to the 1-based parameter `index`, from the stack: bulk
    /// inserts of sync metadata bind identifiers by the hundred thousand.
    func bind(identifier id: UUID, at index: Int32) throws {
        try withUnsafeBytes(of: id.uuid) { try bindBlob($0, at: index) }
    }
}

extension SQLiteConnection {
    /// Runs `sql`, whose parameters are an entity's name then one per identifier of `ids` (bound
    /// as stored, from the stack), and calls `body` with each row: the reads of a merge's objects
    /// a few hundred at a time, which as ``SQLValue`` arguments allocated a buffer per identifier.
    func forEachRow(_ sql: String, entity: String, identifiers ids: some Collection<UUID>, _ body: (SQLiteStatement) throws -> Void) throws {
        let statement = try cachedStatement(sql)
        // A statement left mid-way (body threw) would keep a read transaction open.
        defer { statement.reset() }
        try statement.bind(.text(entity), at: 1)
        var parameter: Int32 = 2
        for id in ids {
            try statement.bind(identifier: id, at: parameter)
            parameter += 1
        }
        while try statement.step() { try body(statement) }
    }
}

extension Stamp {
    /// The stamp in the columns `hlc, replica, seq` of a row; `nil` if they are damaged.
    init?(hlc: SQLValue, replica: SQLValue, seq: SQLValue) {
        guard case .integer(let clock) = hlc, let replicaID = UUID(stored: replica),
              case .integer(let number) = seq, let seq = UInt64(exactly: number) else { return nil }
        self.init(hlc: HLC(rawValue: UInt64(bitPattern: clock)), replica: replicaID, seq: seq)
    }

    /// The stamp in columns `hlc, replica, seq` starting at `index` of the statement's row.
    init?(_ row: SQLiteStatement, at index: Int) {
        guard let replica = row.identifier(at: index + 1) else { return nil }
        self.init(hlc: HLC(rawValue: UInt64(bitPattern: row.integer(at: index))), replica: replica, seq: UInt64(row.integer(at: index + 2)))
    }

    /// Bound values for the columns `hlc, replica, seq`.
    var hlcValue: SQLValue { .integer(Int64(bitPattern: hlc.rawValue)) }
    var replicaValue: SQLValue { replica.storedValue }
    var seqValue: SQLValue { .integer(Int64(seq)) }
}

extension Dot {
    /// The dot in the columns `replica, seq` of a row; `nil` if they are damaged.
    init?(replica: SQLValue, seq: SQLValue) {
        guard let replicaID = UUID(stored: replica), case .integer(let number) = seq, let seq = UInt64(exactly: number) else { return nil }
        self.init(replica: replicaID, seq: seq)
    }

    /// Bound values for the columns `replica, seq`.
    var values: [SQLValue] { [replica.storedValue, .integer(Int64(seq))] }
}

extension DeleteRoot {
    /// The root in the columns `replica, seq, root` of a row; `nil` if they are damaged (or NULL).
    init?(replica: SQLValue, seq: SQLValue, root: SQLValue) {
        guard let dot = Dot(replica: replica, seq: seq), let rootID = UUID(stored: root) else { return nil }
        self.init(dot: dot, root: rootID)
    }

    /// Bound values for the columns `replica, seq, root`.
    var values: [SQLValue] { dot.values + [root.storedValue] }
}

extension ObjectKey {
    /// The object in the columns `entity, id` of a row; `nil` if they are damaged.
    init?(entity: SQLValue, id: SQLValue) {
        guard case .text(let name) = entity, let identifier = UUID(stored: id) else { return nil }
        self.init(entity: name, id: identifier)
    }

    /// Bound values for the columns `entity, id`.
    var values: [SQLValue] { [.text(entity), id.storedValue] }
}
