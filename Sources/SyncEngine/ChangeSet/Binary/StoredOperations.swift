import Codecs
import Foundation
import LocalStoreCore

/// The form a change set's operations are stored in, in ``ChangeSetTable``'s operations column: a blob,
/// about a seventh the size of their JSON and several times faster to write and read.
///
/// A large save stores one change set of about ten operations per object; as JSON that was
/// ~1 KB an object, and writing it cost a third of the change capture. The wire format does not
/// change: change sets still travel as the JSON of `Protocol/README.md`. Rows that earlier
/// versions stored as JSON text stay readable (``SyncTables/decodeChangeSet(_:)`` tells them
/// apart by the column's storage class).
///
/// Layout (varints are unsigned LEB128; UUIDs their 16 bytes):
///
/// ```
/// blob       := version=1, count varint, operation * count
/// operation  := header byte, [name(entity), uuid(id)] unless header & 0x08, fields of the kind
/// header     := kind (bits 0-2: create 0, set 1, delete 2, link 3, unlink 4, position 5, increment 6)
///               | 0x08: same entity and id as the operation before (the sets of one object)
///               | 0x10: delete only: the root is the object itself
/// create     := nothing
/// set        := name(attribute), count varint, value * count
/// delete     := uuid(root) unless header & 0x10
/// link       := name(relationship), uuid(target)
/// unlink     := name(relationship), uuid(target), count varint, (uuid(replica), seq varint) * count
/// position   := name(relationship), uuid(member), string(key)
/// increment  := name(attribute), delta (signed varint: zigzag, then LEB128)
/// name       := index varint into the names defined so far; the next index defines a new
///               name, whose string follows (entity, attribute and relationship names repeat
///               on nearly every operation)
/// string     := length varint, UTF-8 bytes
/// value      := see ``SQLValueTag``
/// ```
enum StoredOperations {
    /// The first byte of every blob; a reader refuses versions it does not know.
    static let version: UInt8 = 1

    private enum Kind: UInt8 {
        case create = 0, set, delete, link, unlink, position, increment
    }

    private static let kindMask: UInt8 = 0x07
    private static let sameObject: UInt8 = 0x08
    private static let rootIsSelf: UInt8 = 0x10

    // MARK: Writing

    /// Encodes `operations`.
    ///
    /// - Throws: `EncodingError.invalidValue` for a real that is infinite or NaN, which the wire
    ///   format cannot carry (so the change set could never be sent).
    static func encode(_ operations: [Operation]) throws -> ByteWriter {
        var encoder = Encoder(operationCount: operations.count)
        try encoder.append(operations)
        return encoder.finish()
    }

    /// Encodes a list of operations given a slice at a time, into the bytes ``encode(_:)`` writes
    /// for the whole list: names defined by one slice are referred to by index in the next.
    struct Encoder: ~Copyable {
        private var writer: ByteWriter
        private var state = EncoderState()

        /// An encoder of `operationCount` operations (the count opens the blob).
        init(operationCount: Int) {
            // Most operations are sets of a few short values: ~24 bytes each, more for new objects.
            writer = ByteWriter(reservingCapacity: 16 + 32 * min(operationCount, 1 << 20))
            writer.writeByte(version)
            writer.writeVarint(UInt64(operationCount))
        }

        /// How many bytes are encoded so far.
        var byteCount: Int { writer.count }

        /// Appends `operations`.
        mutating func append(_ operations: [Operation]) throws {
            for operation in operations { try StoredOperations.write(operation, state: &state, to: &writer) }
        }

        /// The bytes encoded.
        consuming func finish() -> ByteWriter {
            writer
        }
    }

    private static func write(_ operation: Operation, state: inout EncoderState, to writer: inout ByteWriter) throws {
        switch operation {
        case .create(let entity, let id):
            state.writeHeader(.create, entity, id, to: &writer)
        case .set(let entity, let id, let attribute, let values):
            state.writeHeader(.set, entity, id, to: &writer)
            state.names.write(attribute, to: &writer)
            writer.writeVarint(UInt64(values.count))
            for value in values { try writer.writeSQLValue(value) }
        case .delete(let entity, let id, let root):
            state.writeHeader(.delete, entity, id, flags: root == id ? rootIsSelf : 0, to: &writer)
            if root != id { writer.writeUUID(root) }
        case .link(let entity, let id, let relationship, let target):
            state.writeHeader(.link, entity, id, to: &writer)
            state.names.write(relationship, to: &writer)
            writer.writeUUID(target)
        case .unlink(let entity, let id, let relationship, let target, let observed):
            state.writeHeader(.unlink, entity, id, to: &writer)
            state.names.write(relationship, to: &writer)
            writer.writeUUID(target)
            writer.writeVarint(UInt64(observed.count))
            for dot in observed {
                writer.writeUUID(dot.replica)
                writer.writeVarint(dot.seq)
            }
        case .position(let entity, let id, let relationship, let member, let key):
            state.writeHeader(.position, entity, id, to: &writer)
            state.names.write(relationship, to: &writer)
            writer.writeUUID(member)
            writer.writeString(key)
        case .increment(let entity, let id, let attribute, let delta):
            state.writeHeader(.increment, entity, id, to: &writer)
            state.names.write(attribute, to: &writer)
            writer.writeSignedVarint(delta)
        }
    }

    /// What the encoder remembers between operations.
    private struct EncoderState {
        var names = NameTable()
        var previous: (entity: String, id: UUID)?

        /// Writes the header byte and, unless it is the previous operation's, the object.
        mutating func writeHeader(_ kind: Kind, _ entity: String, _ id: UUID, flags: UInt8 = 0, to writer: inout ByteWriter) {
            if let previous, previous.id == id, previous.entity == entity {
                writer.writeByte(kind.rawValue | sameObject | flags)
                return
            }
            writer.writeByte(kind.rawValue | flags)
            names.write(entity, to: &writer)
            writer.writeUUID(id)
            previous = (entity, id)
        }
    }

    // MARK: Reading

    /// Decodes what ``encode(_:)`` wrote.
    ///
    /// - Throws: ``ByteReadError`` naming the operation and the byte offset of what is wrong.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> [Operation] {
        var reader = ByteReader(bytes)
        let version = try reader.readByte()
        guard version == StoredOperations.version else {
            throw reader.failure("format version \(version) is not one this version reads (\(StoredOperations.version))", at: 0)
        }
        let count = try reader.readCount(of: "operations")
        var operations: [Operation] = []
        operations.reserveCapacity(count)
        var names: [String] = []
        var previous: (entity: String, id: UUID)?
        for index in 0..<count {
            let operation = try ByteReadError.within("operation \(index)") { () throws -> Operation in
                let start = reader.offset
                let header = try reader.readByte()
                guard let kind = Kind(rawValue: header & kindMask), header & ~(kindMask | sameObject | rootIsSelf) == 0,
                      header & rootIsSelf == 0 || kind == .delete else {
                    throw reader.failure("the header byte 0x\(String(header, radix: 16)) is not a known operation", at: start)
                }
                let entity: String, id: UUID
                if header & sameObject != 0 {
                    guard let previous else { throw reader.failure("refers to the object of the operation before, but it is the first", at: start) }
                    (entity, id) = previous
                } else {
                    entity = try readName(&reader, &names)
                    id = try reader.readUUID()
                    previous = (entity, id)
                }
                switch kind {
                case .create:
                    return .create(entity: entity, id: id)
                case .set:
                    let attribute = try readName(&reader, &names)
                    let valueCount = try reader.readCount(of: "values")
                    var values: [SQLValue] = []
                    values.reserveCapacity(valueCount)
                    for valueIndex in 0..<valueCount {
                        values.append(try ByteReadError.within("value \(valueIndex)") { try reader.readSQLValue() })
                    }
                    return .set(entity: entity, id: id, attribute: attribute, values: values)
                case .delete:
                    return .delete(entity: entity, id: id, root: header & rootIsSelf != 0 ? id : try reader.readUUID())
                case .link:
                    return .link(entity: entity, id: id, relationship: try readName(&reader, &names), target: try reader.readUUID())
                case .unlink:
                    let relationship = try readName(&reader, &names)
                    let target = try reader.readUUID()
                    let dotCount = try reader.readCount(of: "observed dots", minimumSize: 17)
                    var observed: [Dot] = []
                    observed.reserveCapacity(dotCount)
                    for _ in 0..<dotCount {
                        observed.append(Dot(replica: try reader.readUUID(), seq: try reader.readVarint()))
                    }
                    return .unlink(entity: entity, id: id, relationship: relationship, target: target, observed: observed)
                case .position:
                    return .position(entity: entity, id: id, relationship: try readName(&reader, &names),
                                     member: try reader.readUUID(), key: try reader.readString())
                case .increment:
                    return .increment(entity: entity, id: id, attribute: try readName(&reader, &names), delta: try reader.readSignedVarint())
                }
            }
            operations.append(operation)
        }
        guard reader.isAtEnd else { throw reader.failure("\(reader.remaining) bytes follow the last operation") }
        return operations
    }

    private static func readName(_ reader: inout ByteReader, _ names: inout [String]) throws -> String {
        let start = reader.offset
        let index = try reader.readVarint()
        if index < UInt64(names.count) { return names[Int(index)] }
        guard index == UInt64(names.count) else {
            throw reader.failure("refers to name \(index), but only \(names.count) are defined", at: start)
        }
        let name = try reader.readString()
        names.append(name)
        return name
    }
}

/// The names (entities, attributes, relationships) a blob has defined, each written once and
/// then referred to by its index.
private struct NameTable {
    private var names = InternTable<String>()

    /// Writes `name`'s index, defining it first if it is new.
    mutating func write(_ name: String, to writer: inout ByteWriter) {
        let (index, isNew) = names.intern(name)
        writer.writeVarint(UInt64(index))
        if isNew { writer.writeString(name) }
    }
}
