import Codecs
import Foundation
import LocalStoreCore

/// Reading the push and pull responses with ``JSONReader``: a pull page holds up to thousands
/// of change sets, and decoding it with `JSONDecoder` cost more than merging it. Unknown keys
/// are skipped, as the protocol asks of clients.
extension HTTPTransport {
    /// `{"applied": [dot], "alreadyApplied": [dot], "vector": {...}, "cursor": "42"}`; `vector`
    /// and `cursor` may be absent.
    static func decodePushResult(_ data: Data) throws(SyncClientError) -> PushResult {
        do {
            return try JSONReader.read(data) { reader in
                let start = try reader.beginObject()
                var applied: [Dot]?
                var alreadyApplied: [Dot]?
                var vector: [ReplicaID: UInt64]?
                var cursor: String?
                while let key = try reader.nextKey() {
                    if key.matches("applied") {
                        try JSONReadError.checkFirst(applied, "applied", reader)
                        applied = try JSONReadError.at(.key("applied")) { try reader.readDots() }
                    } else if key.matches("alreadyApplied") {
                        try JSONReadError.checkFirst(alreadyApplied, "alreadyApplied", reader)
                        alreadyApplied = try JSONReadError.at(.key("alreadyApplied")) { try reader.readDots() }
                    } else if key.matches("vector") {
                        try JSONReadError.checkFirst(vector, "vector", reader)
                        if !reader.readNullIfPresent() { vector = try JSONReadError.at(.key("vector")) { try reader.readReplicaMap() } }
                    } else if key.matches("cursor") {
                        try JSONReadError.checkFirst(cursor, "cursor", reader)
                        if !reader.readNullIfPresent() { cursor = try JSONReadError.at(.key("cursor")) { try reader.readString() } }
                    } else {
                        try reader.skipValue()
                    }
                }
                guard let applied, let alreadyApplied else {
                    throw JSONReadError(message: "the push response needs 'applied' and 'alreadyApplied'", offset: start)
                }
                return PushResult(applied: applied, alreadyApplied: alreadyApplied, vector: VersionVector(vector ?? [:]), cursor: cursor ?? "")
            }
        } catch {
            throw .invalidResponse("the push response is malformed: \(error)")
        }
    }

    /// `{"changeSets": <batch with an empty base>, "cursor": "42", "more": true}`.
    static func decodePullPage(_ data: Data) throws(SyncClientError) -> PullPage {
        do {
            return try JSONReader.read(data) { reader in
                let start = try reader.beginObject()
                var changeSets: [ChangeSet]?
                var cursor: String?
                var more: Bool?
                while let key = try reader.nextKey() {
                    if key.matches("changeSets") {
                        try JSONReadError.checkFirst(changeSets, "changeSets", reader)
                        changeSets = try JSONReadError.at(.key("changeSets")) { try reader.readChangeSetBatch().changeSets }
                    } else if key.matches("cursor") {
                        try JSONReadError.checkFirst(cursor, "cursor", reader)
                        cursor = try JSONReadError.at(.key("cursor")) { try reader.readString() }
                    } else if key.matches("more") {
                        try JSONReadError.checkFirst(more, "more", reader)
                        more = try JSONReadError.at(.key("more")) { try reader.readBool() }
                    } else {
                        try reader.skipValue()
                    }
                }
                guard let changeSets, let cursor, let more else {
                    throw JSONReadError(message: "the pull response needs 'changeSets', 'cursor' and 'more'", offset: start)
                }
                return PullPage(changeSets: changeSets, cursor: cursor, more: more)
            }
        } catch {
            throw .invalidResponse("the pull response is malformed: \(error)")
        }
    }

    /// The server's vector from an error body's `"vector"`, or `nil` if a key is not a UUID.
    static func replicaVector(_ map: [String: UInt64]) -> VersionVector? {
        var entries: [ReplicaID: UInt64] = [:]
        for (key, seq) in map {
            guard let replica = UUID(storageText: key) else { return nil }
            entries[replica] = seq
        }
        return VersionVector(entries)
    }
}
