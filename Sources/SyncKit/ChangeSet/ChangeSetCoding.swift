import Foundation

/// The JSON form of change sets, as `Protocol/README.md` describes it.
///
/// A batch carries each change set's version vector as a delta: the first relative to the
/// batch's `base` (a vector the receiver already has), each next one relative to the one
/// before. Consecutive change sets usually differ in one entry, so a change set's size does
/// not grow with the number of replicas.
public enum ChangeSetCoding {
    /// Encodes `changeSets` with vectors relative to `base`.
    public static func encode(_ changeSets: [ChangeSet], base: VersionVector) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(WireBatch(changeSets, base: base))
    }

    /// Decodes a batch made by ``encode(_:base:)``.
    public static func decode(_ data: Data) throws -> (changeSets: [ChangeSet], base: VersionVector) {
        let batch: WireBatch
        do {
            batch = try JSONDecoder().decode(WireBatch.self, from: data)
        } catch let error as DecodingError {
            throw SyncError(.malformedChangeSet, "the change-set batch is not valid JSON of the expected shape: \(describe(error))")
        } catch {
            throw SyncError(.malformedChangeSet, "the change-set batch is not valid JSON: \(error)")
        }
        return try batch.decodedChangeSets()
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context), .dataCorrupted(let context):
            return "\(context.debugDescription) at \(path(context).isEmpty ? "top level" : path(context))"
        @unknown default:
            return "\(error)"
        }
    }
}

/// A batch on the wire.
struct WireBatch: Codable {
    var base: [String: UInt64]
    var changeSets: [WireChangeSet]

    init(_ changeSets: [ChangeSet], base: VersionVector) {
        self.base = Dictionary(uniqueKeysWithValues: base.entries.map { ($0.key.uuidString, $0.value) })
        var previous = base
        self.changeSets = changeSets.map { changeSet in
            defer { previous = changeSet.vector }
            return WireChangeSet(
                replica: changeSet.dot.replica.uuidString, seq: changeSet.dot.seq, hlc: changeSet.hlc.rawValue,
                vector: Dictionary(uniqueKeysWithValues: changeSet.vector.delta(from: previous).map { ($0.key.uuidString, $0.value) }),
                operations: changeSet.operations.map(WireOperation.init))
        }
    }

    func decodedChangeSets() throws -> (changeSets: [ChangeSet], base: VersionVector) {
        let baseVector = VersionVector(try WireBatch.replicaMap(base, field: "base"))
        var previous = baseVector
        var result: [ChangeSet] = []
        for (index, wire) in changeSets.enumerated() {
            guard let replica = UUID(uuidString: wire.replica) else {
                throw SyncError(.malformedChangeSet, "changeSets[\(index)].replica '\(wire.replica)' is not a UUID")
            }
            guard wire.seq > 0 else { throw SyncError(.malformedChangeSet, "changeSets[\(index)].seq must be at least 1") }
            let vector = VersionVector.applying(try WireBatch.replicaMap(wire.vector, field: "changeSets[\(index)].vector"), to: previous)
            guard vector[replica] == wire.seq else {
                throw SyncError(.malformedChangeSet, "changeSets[\(index)].vector gives its own replica \(vector[replica]), not its seq \(wire.seq)")
            }
            let operations = try wire.operations.enumerated().map { offset, operation in
                try operation.operation(at: "changeSets[\(index)].operations[\(offset)]")
            }
            result.append(ChangeSet(dot: Dot(replica: replica, seq: wire.seq), hlc: HLC(rawValue: wire.hlc), vector: vector, operations: operations))
            previous = vector
        }
        return (result, baseVector)
    }

    static func replicaMap(_ map: [String: UInt64], field: String) throws -> [ReplicaID: UInt64] {
        var result: [ReplicaID: UInt64] = [:]
        for (key, value) in map {
            guard let replica = UUID(uuidString: key) else { throw SyncError(.malformedChangeSet, "\(field) has the key '\(key)', which is not a replica UUID") }
            result[replica] = value
        }
        return result
    }
}

struct WireChangeSet: Codable {
    var replica: String
    var seq: UInt64
    var hlc: UInt64
    var vector: [String: UInt64]
    var operations: [WireOperation]
}

/// One operation on the wire: `op` says which, the other fields are those it needs.
struct WireOperation: Codable {
    var op: String
    var entity: String
    var id: String
    var attribute: String?
    var values: [SQLValue]?
    var root: String?
    var relationship: String?
    var target: String?
    var observed: [WireDot]?
    var member: String?
    var key: String?

    init(_ operation: Operation) {
        switch operation {
        case .create(let entity, let id):
            self.init(op: "create", entity: entity, id: id.uuidString)
        case .set(let entity, let id, let attribute, let values):
            self.init(op: "set", entity: entity, id: id.uuidString, attribute: attribute, values: values)
        case .delete(let entity, let id, let root):
            self.init(op: "delete", entity: entity, id: id.uuidString, root: root.uuidString)
        case .link(let entity, let id, let relationship, let target):
            self.init(op: "link", entity: entity, id: id.uuidString, relationship: relationship, target: target.uuidString)
        case .unlink(let entity, let id, let relationship, let target, let observed):
            self.init(op: "unlink", entity: entity, id: id.uuidString, relationship: relationship, target: target.uuidString,
                      observed: observed.map { WireDot(replica: $0.replica.uuidString, seq: $0.seq) })
        case .position(let entity, let id, let relationship, let member, let key):
            self.init(op: "position", entity: entity, id: id.uuidString, relationship: relationship, member: member.uuidString, key: key)
        }
    }

    init(op: String, entity: String, id: String, attribute: String? = nil, values: [SQLValue]? = nil, root: String? = nil,
         relationship: String? = nil, target: String? = nil, observed: [WireDot]? = nil, member: String? = nil, key: String? = nil) {
        self.op = op
        self.entity = entity
        self.id = id
        self.attribute = attribute
        self.values = values
        self.root = root
        self.relationship = relationship
        self.target = target
        self.observed = observed
        self.member = member
        self.key = key
    }

    func operation(at path: String) throws -> Operation {
        func uuid(_ text: String?, _ field: String) throws -> UUID {
            guard let text else { throw SyncError(.malformedChangeSet, "\(path) (\(op)) lacks '\(field)'") }
            guard let value = UUID(uuidString: text) else { throw SyncError(.malformedChangeSet, "\(path).\(field) '\(text)' is not a UUID") }
            return value
        }
        func string(_ text: String?, _ field: String) throws -> String {
            guard let text, !text.isEmpty else { throw SyncError(.malformedChangeSet, "\(path) (\(op)) lacks '\(field)'") }
            return text
        }
        let objectID = try uuid(id, "id")
        switch op {
        case "create": return .create(entity: entity, id: objectID)
        case "set":
            guard let values else { throw SyncError(.malformedChangeSet, "\(path) (set) lacks 'values'") }
            return .set(entity: entity, id: objectID, attribute: try string(attribute, "attribute"), values: values)
        case "delete": return .delete(entity: entity, id: objectID, root: try uuid(root, "root"))
        case "link":
            return .link(entity: entity, id: objectID, relationship: try string(relationship, "relationship"), target: try uuid(target, "target"))
        case "unlink":
            let dots = try (observed ?? []).enumerated().map { index, dot in
                guard let replica = UUID(uuidString: dot.replica) else {
                    throw SyncError(.malformedChangeSet, "\(path).observed[\(index)].replica '\(dot.replica)' is not a UUID")
                }
                return Dot(replica: replica, seq: dot.seq)
            }
            return .unlink(entity: entity, id: objectID, relationship: try string(relationship, "relationship"),
                           target: try uuid(target, "target"), observed: dots)
        case "position":
            return .position(entity: entity, id: objectID, relationship: try string(relationship, "relationship"),
                             member: try uuid(member, "member"), key: try string(key, "key"))
        default:
            throw SyncError(.malformedChangeSet, "\(path).op '\(op)' is not one of create, set, delete, link, unlink, position")
        }
    }
}

struct WireDot: Codable {
    var replica: String
    var seq: UInt64
}
