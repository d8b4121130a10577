import Codecs
import Foundation
import LocalStoreCore

/// The JSON form of change sets, as `Protocol/README.md` describes it.
///
/// A batch carries each change set's version vector as a delta: the first relative to the
/// batch's `base` (a vector the receiver already has), each next one relative to the one
/// before. Consecutive change sets usually differ in one entry, so a change set's size does
/// not grow with the number of replicas.
///
/// Batches are written and read with SyncKit's own `JSONWriter` and `JSONReader` rather
/// than `Codable`: on large batches `JSONEncoder` and `JSONDecoder` cost more than the merge
/// itself. The bytes are those `JSONEncoder` wrote with `.sortedKeys` and
/// `.withoutEscapingSlashes`, and decoding accepts any valid JSON of the batch's shape.
public enum ChangeSetCoding {
    /// Encodes `changeSets` with vectors relative to `base`.
    ///
    /// - Throws: `EncodingError.invalidValue` if a value is a real that JSON cannot express
    ///   (infinite or NaN).
    public static func encode(_ changeSets: [ChangeSet], base: VersionVector) throws -> Data {
        var writer = JSONWriter(reservingCapacity: estimatedSize(of: changeSets, base: base))
        try writer.writeChangeSetBatch(changeSets, base: base)
        return writer.data
    }

    /// Decodes a batch made by ``encode(_:base:)``.
    ///
    /// - Throws: ``SyncError`` `.malformedChangeSet` whose message names what is wrong and
    ///   where: the path (`changeSets[3].operations[7].values[0]`) and the byte offset.
    public static func decode(_ data: Data) throws -> (changeSets: [ChangeSet], base: VersionVector) {
        do {
            return try JSONReader.read(data) { try $0.readChangeSetBatch() }
        } catch let error as JSONReadError {
            throw SyncError(.malformedChangeSet, "the change-set batch is malformed: \(error)")
        }
    }

    /// A `DecodingError` as one line: what and where (`.changeSets[0].seq`).
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

    /// Bytes to reserve for a batch: a little over what a typical operation takes, so that large
    /// batches are written without regrowing the buffer.
    static func estimatedSize(of changeSets: [ChangeSet], base: VersionVector) -> Int {
        var operations = 0
        for changeSet in changeSets { operations += changeSet.operations.count }
        return 64 + 48 * base.entries.count + 160 * changeSets.count + 128 * operations
    }
}

extension JSONWriter {
    /// Writes a batch: `{"base": {...}, "changeSets": [...]}`, each change set's vector as the
    /// delta from the one before (the first from `base`).
    mutating func writeChangeSetBatch(_ changeSets: [ChangeSet], base: VersionVector) throws {
        beginObject()
        writeKey("base")
        writeReplicaMap(base.entries)
        writeKey("changeSets")
        beginArray()
        var previous = base
        for changeSet in changeSets {
            beginObject()
            if let authenticator = changeSet.authenticator {
                writeKey("authenticator")
                writeString(LowercaseHex.encode(authenticator))
            }
            writeKey("hlc")
            writeUnsignedInteger(changeSet.hlc.rawValue)
            writeKey("operations")
            try writeOperations(changeSet.operations)
            writeKey("replica")
            writeUUID(changeSet.dot.replica)
            writeKey("seq")
            writeUnsignedInteger(changeSet.dot.seq)
            writeKey("vector")
            writeReplicaMap(changeSet.vector.delta(from: previous))
            endObject()
            previous = changeSet.vector
        }
        endArray()
        endObject()
    }
}

extension JSONReader {
    /// Reads a batch, rebuilding each change set's full vector from the deltas. Keys may come in
    /// any order; unknown keys are skipped.
    mutating func readChangeSetBatch() throws -> (changeSets: [ChangeSet], base: VersionVector) {
        let batch = try readChangeSetBatch(readingOperations: true)
        return (batch.changeSets, batch.base)
    }

    /// ``readChangeSetBatch()``; without `readingOperations`, each change set's operations are
    /// skipped (its `operations` left empty) and `operations` gives where each one's array lies
    /// in the input, to be read later a slice at a time.
    mutating func readChangeSetBatch(readingOperations: Bool) throws
        -> (changeSets: [ChangeSet], base: VersionVector, operations: [Range<Int>]) {
        let start = try beginObject()
        var base: [ReplicaID: UInt64]?
        var pending: [PendingChangeSet]?
        while let key = try nextKey() {
            if key.matches("base") {
                try JSONReadError.checkFirst(base, "base", self)
                base = try JSONReadError.at(.key("base")) { try readReplicaMap() }
            } else if key.matches("changeSets") {
                try JSONReadError.checkFirst(pending, "changeSets", self)
                pending = try JSONReadError.at(.key("changeSets")) {
                    try beginArray()
                    var changeSets: [PendingChangeSet] = []
                    while try nextElement() {
                        changeSets.append(try JSONReadError.at(.index(changeSets.count)) { try readPendingChangeSet(readingOperations: readingOperations) })
                    }
                    return changeSets
                }
            } else {
                try skipValue()
            }
        }
        guard let base else { throw JSONReadError(message: "a batch needs 'base'", offset: start) }
        guard let pending else { throw JSONReadError(message: "a batch needs 'changeSets'", offset: start) }
        // The deltas chain from `base`, which may have come after the change sets: resolve them now.
        let baseVector = VersionVector(base)
        var previous = baseVector
        var changeSets: [ChangeSet] = []
        changeSets.reserveCapacity(pending.count)
        for (index, changeSet) in pending.enumerated() {
            let vector = VersionVector.applying(changeSet.vectorDelta, to: previous)
            guard vector[changeSet.replica] == changeSet.seq else {
                throw JSONReadError(message: "gives the change set's own replica \(vector[changeSet.replica]), not its seq \(changeSet.seq)",
                                    offset: changeSet.offset, path: [.key("changeSets"), .index(index), .key("vector")])
            }
            changeSets.append(ChangeSet(dot: Dot(replica: changeSet.replica, seq: changeSet.seq), hlc: HLC(rawValue: changeSet.hlc),
                                        vector: vector, operations: changeSet.operations, authenticator: changeSet.authenticator))
            previous = vector
        }
        return (changeSets, baseVector, pending.map(\.operationsRange))
    }

    /// One element of `changeSets`, its vector still a delta.
    private mutating func readPendingChangeSet(readingOperations: Bool) throws -> PendingChangeSet {
        let start = try beginObject()
        var operationsRange = 0..<0
        var replica: UUID?
        var seq: UInt64?
        var hlc: UInt64?
        var delta: [ReplicaID: UInt64]?
        var operations: [Operation]?
        var authenticator: [UInt8]?
        while let key = try nextKey() {
            if key.matches("authenticator") {
                try JSONReadError.checkFirst(authenticator, "authenticator", self)
                authenticator = try JSONReadError.at(.key("authenticator")) {
                    guard let bytes = LowercaseHex.decode(try readString()), bytes.count == ChangeSetAuthenticator.length else {
                        throw failure("an authenticator is 64 hex digits (HMAC-SHA256)")
                    }
                    return bytes
                }
            } else if key.matches("operations") {
                try JSONReadError.checkFirst(operations, "operations", self)
                operations = try JSONReadError.at(.key("operations")) {
                    guard !readingOperations else { return try readOperations() }
                    skipWhitespace()
                    let first = offset
                    guard peekKind() == .array else { throw failure("operations must be an array") }
                    try skipValue()
                    operationsRange = first..<offset
                    return []
                }
            } else if key.matches("replica") {
                try JSONReadError.checkFirst(replica, "replica", self)
                replica = try JSONReadError.at(.key("replica")) { try readUUID() }
            } else if key.matches("seq") {
                try JSONReadError.checkFirst(seq, "seq", self)
                seq = try JSONReadError.at(.key("seq")) {
                    let value = try readUnsignedInteger()
                    guard value > 0 else { throw failure("seq must be at least 1") }
                    return value
                }
            } else if key.matches("hlc") {
                try JSONReadError.checkFirst(hlc, "hlc", self)
                hlc = try JSONReadError.at(.key("hlc")) { try readUnsignedInteger() }
            } else if key.matches("vector") {
                try JSONReadError.checkFirst(delta, "vector", self)
                delta = try JSONReadError.at(.key("vector")) { try readReplicaMap() }
            } else {
                try skipValue()
            }
        }
        func missing(_ name: String) -> JSONReadError {
            JSONReadError(message: "a change set needs '\(name)'", offset: start)
        }
        guard let replica else { throw missing("replica") }
        guard let seq else { throw missing("seq") }
        guard let hlc else { throw missing("hlc") }
        guard let delta else { throw missing("vector") }
        guard let operations else { throw missing("operations") }
        return PendingChangeSet(replica: replica, seq: seq, hlc: hlc, vectorDelta: delta, operations: operations,
                                authenticator: authenticator, offset: start, operationsRange: operationsRange)
    }
}

/// A change set as read from a batch, before its vector delta is applied.
private struct PendingChangeSet {
    var replica: ReplicaID
    var seq: UInt64
    var hlc: UInt64
    var vectorDelta: [ReplicaID: UInt64]
    var operations: [Operation]
    var authenticator: [UInt8]?
    /// Where its object starts, for errors found after reading.
    var offset: Int
    /// Where its operations array lies, when they were skipped.
    var operationsRange: Range<Int>
}
