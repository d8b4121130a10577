import Codecs
import Foundation
import LocalStoreCore

extension Stamp {
    /// The stamp in the columns `hlc, replica, seq` of a row; `nil` if they are damaged.
    init?(hlc: SQLValue, replica: SQLValue, seq: SQLValue) {
        guard case .integer(let clock) = hlc, case .text(let replicaText) = replica, let replicaID = UUID(storageText: replicaText),
              case .integer(let number) = seq, let seq = UInt64(exactly: number) else { return nil }
        self.init(hlc: HLC(rawValue: UInt64(bitPattern: clock)), replica: replicaID, seq: seq)
    }

    /// The stamp in columns `hlc, replica, seq` starting at `index` of the statement's row.
    init?(_ row: SQLiteStatement, at index: Int) {
        guard let replica = row.uuid(at: index + 1) else { return nil }
        self.init(hlc: HLC(rawValue: UInt64(bitPattern: row.integer(at: index))), replica: replica, seq: UInt64(row.integer(at: index + 2)))
    }

    /// Bound values for the columns `hlc, replica, seq`.
    var hlcValue: SQLValue { .integer(Int64(bitPattern: hlc.rawValue)) }
    var replicaValue: SQLValue { .text(replica.storageText) }
    var seqValue: SQLValue { .integer(Int64(seq)) }
}

extension DeleteRoot {
    /// The root in the columns `replica, seq, root` of a row; `nil` if they are damaged (or NULL).
    init?(replica: SQLValue, seq: SQLValue, root: SQLValue) {
        guard case .text(let replicaText) = replica, let replicaID = UUID(storageText: replicaText),
              case .integer(let number) = seq, let seq = UInt64(exactly: number),
              case .text(let rootText) = root, let rootID = UUID(storageText: rootText) else { return nil }
        self.init(dot: Dot(replica: replicaID, seq: seq), root: rootID)
    }

    /// Bound values for the columns `replica, seq, root`.
    var values: [SQLValue] { [.text(dot.replica.storageText), .integer(Int64(dot.seq)), .text(root.storageText)] }
}

extension ObjectKey {
    /// The object in the columns `entity, id` of a row; `nil` if they are damaged.
    init?(entity: SQLValue, id: SQLValue) {
        guard case .text(let name) = entity, case .text(let idText) = id, let identifier = UUID(storageText: idText) else { return nil }
        self.init(entity: name, id: identifier)
    }

    /// Bound values for the columns `entity, id`.
    var values: [SQLValue] { [.text(entity), .text(id.storageText)] }
}
