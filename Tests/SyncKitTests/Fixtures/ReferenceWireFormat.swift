import Foundation
@testable import SyncEngine
import SyncKit
import TestSupport

/// The change-set wire format as `Codable` types, encoded by Foundation's `JSONEncoder`: what
/// SyncKit wrote before it had its own JSON writer. Tests compare the writer's bytes with these.
enum ReferenceWireFormat {
    struct Batch: Codable {
        var base: [String: UInt64]
        var changeSets: [ChangeSetObject]
    }

    struct ChangeSetObject: Codable {
        var replica: String
        var seq: UInt64
        var hlc: UInt64
        var vector: [String: UInt64]
        var operations: [OperationObject]
    }

    struct DotObject: Codable {
        var replica: String
        var seq: UInt64
    }

    /// Optional fields are left out when nil, as synthesized `Codable` does.
    struct OperationObject: Codable {
        var op: String
        var entity: String
        var id: String
        var attribute: String?
        var values: [SQLValue]?
        var root: String?
        var relationship: String?
        var target: String?
        var observed: [DotObject]?
        var member: String?
        var key: String?
        var delta: Int64?

        init(_ operation: SyncKit.Operation) {
            switch operation {
            case .create(let entity, let id):
                (op, self.entity, self.id) = ("create", entity, id.uuidString)
            case .set(let entity, let id, let attribute, let values):
                (op, self.entity, self.id, self.attribute, self.values) = ("set", entity, id.uuidString, attribute, values)
            case .delete(let entity, let id, let root):
                (op, self.entity, self.id, self.root) = ("delete", entity, id.uuidString, root.uuidString)
            case .link(let entity, let id, let relationship, let target):
                (op, self.entity, self.id, self.relationship, self.target) = ("link", entity, id.uuidString, relationship, target.uuidString)
            case .unlink(let entity, let id, let relationship, let target, let observed):
                (op, self.entity, self.id, self.relationship, self.target) = ("unlink", entity, id.uuidString, relationship, target.uuidString)
                self.observed = observed.map { DotObject(replica: $0.replica.uuidString, seq: $0.seq) }
            case .position(let entity, let id, let relationship, let member, let key):
                (op, self.entity, self.id, self.relationship, self.member, self.key) = ("position", entity, id.uuidString, relationship, member.uuidString, key)
            case .increment(let entity, let id, let attribute, let delta):
                (op, self.entity, self.id, self.attribute, self.delta) = ("increment", entity, id.uuidString, attribute, delta)
            }
        }
    }

    static func map(_ entries: [ReplicaID: UInt64]) -> [String: UInt64] {
        Dictionary(uniqueKeysWithValues: entries.map { ($0.key.uuidString, $0.value) })
    }

    /// `JSONEncoder` with the wire format's options (`.sortedKeys`, `.withoutEscapingSlashes`),
    /// or the stored columns' (`.sortedKeys` only).
    static func encoder(escapingSlashes: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = escapingSlashes ? [.sortedKeys] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// A batch as the `Codable` implementation encoded it.
    static func encode(_ changeSets: [ChangeSet], base: VersionVector) throws -> Data {
        var previous = base
        let objects = changeSets.map { changeSet in
            defer { previous = changeSet.vector }
            return ChangeSetObject(replica: changeSet.dot.replica.uuidString, seq: changeSet.dot.seq, hlc: changeSet.hlc.rawValue,
                                   vector: map(changeSet.vector.delta(from: previous)), operations: changeSet.operations.map(OperationObject.init))
        }
        return try encoder().encode(Batch(base: map(base.entries), changeSets: objects))
    }
}

/// Random change sets covering every operation kind and SQL value kind, replayable by seed.
struct RandomChangeSets {
    var random: SeededGenerator
    let replicas: [ReplicaID]

    init(seed: UInt64, replicaCount: Int = 4) {
        var generator = SeededGenerator(seed: seed)
        replicas = (0..<replicaCount).map { _ in generator.uuid() }
        random = generator
    }

    /// Text with the characters escaping cares about: quotes, backslashes, slashes, control
    /// characters, non-ASCII, emoji, and plain runs.
    mutating func text() -> String {
        let pieces = ["", "a", "plain words", "\"", "\\", "/", "</script>", "\n", "\t", "\r", "\u{0}", "\u{1}", "\u{8}", "\u{c}", "\u{1f}",
                      "\u{7f}", "é", "日本語", "😀", "👩‍👩‍👧", "\u{2028}", "\u{feff}", "x\u{0}y", "💡/\\\"", "Ω"]
        let count = Int.random(in: 0...4, using: &random)
        return (0..<count).map { _ in pieces.randomElement(using: &random)! }.joined()
    }

    mutating func double() -> Double {
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return [0.1, 1e300, -0.0, .leastNonzeroMagnitude, 1.0, 2, 1e16, 1e-7, 0.5, .pi, -1.5, Double.greatestFiniteMagnitude].randomElement(using: &random)!
        case 1: return Double(Int64.random(in: -1_000_000...1_000_000, using: &random))
        case 2: return Double.random(in: -1...1, using: &random)
        default: return Double(bitPattern: random.next() & ~(0x7FF << 52) | (UInt64.random(in: 1...0x7FE, using: &random) << 52))
        }
    }

    mutating func value() -> SQLValue {
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return .null
        case 1: return .integer([Int64.min, Int64.max, 0, -1, Int64.random(in: .min ... .max, using: &random)].randomElement(using: &random)!)
        case 2: return .real(double())
        case 3: return .text(text())
        default: return .blob(Data((0..<Int.random(in: 0...20, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }))
        }
    }

    mutating func dot() -> Dot {
        Dot(replica: replicas.randomElement(using: &random)!, seq: UInt64.random(in: 1...UInt64.max, using: &random))
    }

    mutating func operation() -> SyncKit.Operation {
        let entity = ["Board", "Card", "Tag", text()].randomElement(using: &random)!
        let id = random.uuid()
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return .create(entity: entity, id: id)
        case 1: return .set(entity: entity, id: id, attribute: "a" + text(), values: (0..<Int.random(in: 0...3, using: &random)).map { _ in value() })
        case 2: return .delete(entity: entity, id: id, root: random.uuid())
        case 3: return .link(entity: entity, id: id, relationship: "r" + text(), target: random.uuid())
        case 4: return .unlink(entity: entity, id: id, relationship: "r" + text(), target: random.uuid(),
                               observed: (0..<Int.random(in: 0...3, using: &random)).map { _ in dot() })
        default: return .position(entity: entity, id: id, relationship: "r" + text(), member: random.uuid(), key: "k" + text())
        }
    }

    /// A few change sets whose vectors grow, each covering its own seq, as real ones do.
    mutating func changeSets() -> (changeSets: [ChangeSet], base: VersionVector) {
        var vector = VersionVector()
        for replica in replicas where random.chance(0.5) { vector[replica] = UInt64.random(in: 1...1_000, using: &random) }
        let base = vector
        var result: [ChangeSet] = []
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            let author = replicas.randomElement(using: &random)!
            vector[author] += 1
            if random.chance(0.3), let other = replicas.randomElement(using: &random), other != author {
                vector[other] += UInt64.random(in: 1...5, using: &random)
            }
            result.append(ChangeSet(dot: Dot(replica: author, seq: vector[author]), hlc: HLC(rawValue: random.next()), vector: vector,
                                    operations: (0..<Int.random(in: 0...6, using: &random)).map { _ in operation() }))
        }
        return (result, base)
    }
}
