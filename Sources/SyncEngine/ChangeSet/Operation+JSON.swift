import Codecs
import Foundation
import LocalStoreCore

/// Operations, dots and replica maps in their JSON form (`Protocol/README.md`), written and read
/// directly, field by field. Keys are written in byte order, the order `JSONEncoder`'s
/// `.sortedKeys` gave them, so the bytes have not changed since the format was `Codable`.
extension JSONWriter {
    /// Writes a version vector or a vector delta: `{"<UUID>": seq, ...}`, keys sorted.
    mutating func writeReplicaMap(_ entries: [ReplicaID: UInt64]) {
        beginObject()
        if entries.count == 1, let (replica, seq) = entries.first {
            writeKey(replica)
            writeUnsignedInteger(seq)
        } else {
            for (replica, seq) in entries.sorted(by: { $0.key.precedesInStorageOrder($1.key) }) {
                writeKey(replica)
                writeUnsignedInteger(seq)
            }
        }
        endObject()
    }

    /// Writes `{"replica": "<UUID>", "seq": n}`.
    mutating func writeDot(_ dot: Dot) {
        beginObject()
        writeKey("replica")
        writeUUID(dot.replica)
        writeKey("seq")
        writeUnsignedInteger(dot.seq)
        endObject()
    }

    /// Writes operations as a JSON array.
    mutating func writeOperations(_ operations: [Operation]) throws {
        beginArray()
        for operation in operations { try writeOperation(operation) }
        endArray()
    }

    /// Writes one operation: `op`, `entity`, `id` and the fields its kind needs, keys sorted.
    mutating func writeOperation(_ operation: Operation) throws {
        beginObject()
        switch operation {
        case .create(let entity, let id):
            writeEntityAndID(entity, id)
            writeKey("op")
            writeString(literal: "create")
        case .set(let entity, let id, let attribute, let values):
            writeKey("attribute")
            writeString(attribute)
            writeEntityAndID(entity, id)
            writeKey("op")
            writeString(literal: "set")
            writeKey("values")
            try writeSQLValues(values)
        case .delete(let entity, let id, let root):
            writeEntityAndID(entity, id)
            writeKey("op")
            writeString(literal: "delete")
            writeKey("root")
            writeUUID(root)
        case .link(let entity, let id, let relationship, let target):
            writeEntityAndID(entity, id)
            writeKey("op")
            writeString(literal: "link")
            writeKey("relationship")
            writeString(relationship)
            writeKey("target")
            writeUUID(target)
        case .unlink(let entity, let id, let relationship, let target, let observed):
            writeEntityAndID(entity, id)
            writeKey("observed")
            beginArray()
            for dot in observed { writeDot(dot) }
            endArray()
            writeKey("op")
            writeString(literal: "unlink")
            writeKey("relationship")
            writeString(relationship)
            writeKey("target")
            writeUUID(target)
        case .position(let entity, let id, let relationship, let member, let key):
            writeEntityAndID(entity, id)
            writeKey("key")
            writeString(key)
            writeKey("member")
            writeUUID(member)
            writeKey("op")
            writeString(literal: "position")
            writeKey("relationship")
            writeString(relationship)
        case .increment(let entity, let id, let attribute, let delta):
            writeKey("attribute")
            writeString(attribute)
            writeKey("delta")
            writeInteger(delta)
            writeEntityAndID(entity, id)
            writeKey("op")
            writeString(literal: "increment")
        }
        endObject()
    }

    private mutating func writeEntityAndID(_ entity: String, _ id: UUID) {
        writeKey("entity")
        writeString(entity)
        writeKey("id")
        writeUUID(id)
    }
}

extension JSONReader {
    /// Reads a version vector or a vector delta: `{"<UUID>": seq, ...}`.
    package mutating func readReplicaMap() throws -> [ReplicaID: UInt64] {
        try beginObject()
        var result: [ReplicaID: UInt64] = [:]
        while let key = try nextKey() {
            guard let replica = key.uuid else { throw failure("the key \(key.quoted) is not a replica UUID") }
            let seq = try JSONReadError.at(.key(key.string)) { try readUnsignedInteger() }
            guard result.updateValue(seq, forKey: replica) == nil else { throw failure("the replica \(replica.uuidString) appears twice") }
        }
        return result
    }

    /// Reads `{"replica": "<UUID>", "seq": n}`.
    mutating func readDot() throws -> Dot {
        let start = try beginObject()
        var replica: UUID?
        var seq: UInt64?
        while let key = try nextKey() {
            if key.matches("replica") {
                try JSONReadError.checkFirst(replica, "replica", self)
                replica = try JSONReadError.at(.key("replica")) { try readUUID() }
            } else if key.matches("seq") {
                try JSONReadError.checkFirst(seq, "seq", self)
                seq = try JSONReadError.at(.key("seq")) { try readUnsignedInteger() }
            } else {
                try skipValue()
            }
        }
        guard let replica, let seq else { throw JSONReadError(message: "a dot needs 'replica' and 'seq'", offset: start) }
        return Dot(replica: replica, seq: seq)
    }

    /// Reads a JSON array of dots; errors name the element (`[2]`).
    mutating func readDots() throws -> [Dot] {
        try beginArray()
        var dots: [Dot] = []
        while try nextElement() {
            dots.append(try JSONReadError.at(.index(dots.count)) { try readDot() })
        }
        return dots
    }

    /// Reads a JSON array of operations; errors name the element (`[7]`).
    mutating func readOperations() throws -> [Operation] {
        try beginArray()
        var operations: [Operation] = []
        while try nextElement() {
            operations.append(try JSONReadError.at(.index(operations.count)) { try readOperation() })
        }
        return operations
    }

    /// Reads one operation, its keys in any order. Unknown keys are skipped and `null` counts as
    /// absent, as with the `Codable` form before.
    mutating func readOperation() throws -> Operation {
        let start = try beginObject()
        var fields = OperationFields()
        while let key = try nextKey() {
            guard let field = OperationFields.Field(key) else {
                try skipValue()
                continue
            }
            guard fields.seen & field.bit == 0 else { throw failure("the key '\(field.name)' appears twice") }
            fields.seen |= field.bit
            if readNullIfPresent() { continue }
            try JSONReadError.at(.key(field.name)) { try fields.read(field, from: &self) }
        }
        return try fields.operation(start: start)
    }
}

/// The fields of one operation while its object is read: the keys may come in any order, so
/// the operation is built at the end.
private struct OperationFields {
    enum Field: Int {
        case op, entity, id, attribute, values, root, relationship, target, observed, member, key, delta

        init?(_ key: JSONStringValue) {
            // Most frequent first; a length mismatch rejects a name at once.
            if key.matches("op") { self = .op }
            else if key.matches("entity") { self = .entity }
            else if key.matches("id") { self = .id }
            else if key.matches("attribute") { self = .attribute }
            else if key.matches("values") { self = .values }
            else if key.matches("relationship") { self = .relationship }
            else if key.matches("target") { self = .target }
            else if key.matches("root") { self = .root }
            else if key.matches("member") { self = .member }
            else if key.matches("key") { self = .key }
            else if key.matches("observed") { self = .observed }
            else if key.matches("delta") { self = .delta }
            else { return nil }
        }

        var bit: Int { 1 << rawValue }

        var name: String {
            switch self {
            case .op: "op"
            case .entity: "entity"
            case .id: "id"
            case .attribute: "attribute"
            case .values: "values"
            case .root: "root"
            case .relationship: "relationship"
            case .target: "target"
            case .observed: "observed"
            case .member: "member"
            case .key: "key"
            case .delta: "delta"
            }
        }
    }

    enum Kind: String {
        case create, set, delete, link, unlink, position, increment
    }

    var seen = 0
    var kind: Kind?
    var entity: String?
    var id: UUID?
    var attribute: String?
    var values: [SQLValue]?
    var root: UUID?
    var relationship: String?
    var target: UUID?
    var observed: [Dot]?
    var member: UUID?
    var key: String?
    var delta: Int64?

    mutating func read(_ field: Field, from reader: inout JSONReader) throws {
        switch field {
        case .op:
            let start = reader.offset
            let text = try reader.readStringValue()
            if text.matches("set") { kind = .set }
            else if text.matches("create") { kind = .create }
            else if text.matches("link") { kind = .link }
            else if text.matches("position") { kind = .position }
            else if text.matches("unlink") { kind = .unlink }
            else if text.matches("delete") { kind = .delete }
            else if text.matches("increment") { kind = .increment }
            else {
                throw JSONReadError(message: "\(text.quoted) is not one of create, set, delete, link, unlink, position, increment", offset: start)
            }
        case .entity: entity = try reader.readString()
        case .id: id = try reader.readUUID()
        case .attribute: attribute = try reader.readString()
        case .values: values = try reader.readSQLValues()
        case .root: root = try reader.readUUID()
        case .relationship: relationship = try reader.readString()
        case .target: target = try reader.readUUID()
        case .member: member = try reader.readUUID()
        case .key: key = try reader.readString()
        case .observed: observed = try reader.readDots()
        case .delta: delta = try reader.readInteger()
        }
    }

    /// The operation, once every key is read; an error names what its kind lacks.
    func operation(start: Int) throws -> Operation {
        guard let kind else { throw JSONReadError(message: "an operation needs 'op'", offset: start) }
        func required<Value>(_ value: Value?, _ name: String) throws -> Value {
            guard let value else { throw JSONReadError(message: "a \(kind.rawValue) operation needs '\(name)'", offset: start) }
            return value
        }
        func nonEmpty(_ value: String?, _ name: String) throws -> String {
            guard let value, !value.isEmpty else { throw JSONReadError(message: "a \(kind.rawValue) operation needs a non-empty '\(name)'", offset: start) }
            return value
        }
        let entity = try required(entity, "entity")
        let id = try required(id, "id")
        switch kind {
        case .create:
            return .create(entity: entity, id: id)
        case .set:
            return .set(entity: entity, id: id, attribute: try nonEmpty(attribute, "attribute"), values: try required(values, "values"))
        case .delete:
            return .delete(entity: entity, id: id, root: try required(root, "root"))
        case .link:
            return .link(entity: entity, id: id, relationship: try nonEmpty(relationship, "relationship"), target: try required(target, "target"))
        case .unlink:
            return .unlink(entity: entity, id: id, relationship: try nonEmpty(relationship, "relationship"),
                           target: try required(target, "target"), observed: observed ?? [])
        case .position:
            return .position(entity: entity, id: id, relationship: try nonEmpty(relationship, "relationship"),
                             member: try required(member, "member"), key: try nonEmpty(key, "key"))
        case .increment:
            return .increment(entity: entity, id: id, attribute: try nonEmpty(attribute, "attribute"), delta: try required(delta, "delta"))
        }
    }
}
