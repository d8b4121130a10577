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

    /// `{"changeSets": <batch with an empty base>, "cursor": "42", "cursorDigest": "…", "more": true,
    /// "stable": {...}}`; `cursorDigest` and `stable` may be absent.
    static func decodePullPage(_ data: Data) throws(SyncClientError) -> PullPage {
        do {
            return try JSONReader.read(data) { reader in
                let start = try reader.beginObject()
                var changeSets: [ChangeSet]?
                var cursor: String?
                var cursorDigest: String?
                var more: Bool?
                var stable: [ReplicaID: UInt64]?
                var largeChangeSet: LargeChangeSetReference?
                while let key = try reader.nextKey() {
                    if key.matches("stable") {
                        try JSONReadError.checkFirst(stable, "stable", reader)
                        if !reader.readNullIfPresent() { stable = try JSONReadError.at(.key("stable")) { try reader.readReplicaMap() } }
                    } else if key.matches("changeSets") {
                        try JSONReadError.checkFirst(changeSets, "changeSets", reader)
                        changeSets = try JSONReadError.at(.key("changeSets")) { try reader.readChangeSetBatch().changeSets }
                    } else if key.matches("cursor") {
                        try JSONReadError.checkFirst(cursor, "cursor", reader)
                        cursor = try JSONReadError.at(.key("cursor")) { try reader.readString() }
                    } else if key.matches("cursorDigest") {
                        try JSONReadError.checkFirst(cursorDigest, "cursorDigest", reader)
                        cursorDigest = try JSONReadError.at(.key("cursorDigest")) { try reader.readString() }
                    } else if key.matches("more") {
                        try JSONReadError.checkFirst(more, "more", reader)
                        more = try JSONReadError.at(.key("more")) { try reader.readBool() }
                    } else if key.matches("largeChangeSet") {
                        try JSONReadError.checkFirst(largeChangeSet, "largeChangeSet", reader)
                        largeChangeSet = try JSONReadError.at(.key("largeChangeSet")) { try LargeChangeSetReference(&reader) }
                    } else {
                        try reader.skipValue()
                    }
                }
                guard let changeSets, let cursor, let more else {
                    throw JSONReadError(message: "the pull response needs 'changeSets', 'cursor' and 'more'", offset: start)
                }
                return PullPage(changeSets: changeSets, cursor: cursor, cursorDigest: cursorDigest, more: more, stable: stable.map { VersionVector($0) },
                                largeChangeSet: largeChangeSet)
            }
        } catch {
            throw .invalidResponse("the pull response is malformed: \(error)")
        }
    }

    /// `{"versionHash": "…", "dataset": "…"}`, the answer to a schema registration.
    static func decodeSchemaRegistration(_ data: Data) throws(SyncClientError) -> SchemaRegistration {
        do {
            return try JSONReader.read(data) { reader in
                let start = try reader.beginObject()
                var versionHash: String?
                var dataset: String?
                var registration: String?
                while let key = try reader.nextKey() {
                    if key.matches("registration") {
                        try JSONReadError.checkFirst(registration, "registration", reader)
                        registration = try JSONReadError.at(.key("registration")) { try reader.readString() }
                    } else if key.matches("versionHash") {
                        try JSONReadError.checkFirst(versionHash, "versionHash", reader)
                        versionHash = try JSONReadError.at(.key("versionHash")) { try reader.readString() }
                    } else if key.matches("dataset") {
                        try JSONReadError.checkFirst(dataset, "dataset", reader)
                        dataset = try JSONReadError.at(.key("dataset")) { try reader.readString() }
                    } else {
                        try reader.skipValue()
                    }
                }
                guard let versionHash, let dataset else {
                    throw JSONReadError(message: "the schema registration response needs 'versionHash' and 'dataset'", offset: start)
                }
                return SchemaRegistration(versionHash: versionHash, dataset: dataset, isOlderThanDataset: registration == "older")
            }
        } catch {
            throw .invalidResponse("the schema registration response is malformed: \(error)")
        }
    }

    /// Decodes `GET .../schema/versions`: every registered version, oldest first.
    static func decodeSchemaVersions(_ data: Data) throws(SyncClientError) -> [SchemaVersion] {
        do {
            return try JSONReader.read(data) { reader in
                var versions: [SchemaVersion]?
                _ = try reader.beginObject()
                while let key = try reader.nextKey() {
                    guard key.matches("versions") else {
                        try reader.skipValue()
                        continue
                    }
                    try JSONReadError.checkFirst(versions, "versions", reader)
                    var list: [SchemaVersion] = []
                    try reader.beginArray()
                    while try reader.nextElement() {
                        list.append(try JSONReadError.at(.index(list.count)) { try decodeSchemaVersion(&reader) })
                    }
                    versions = list
                }
                guard let versions, !versions.isEmpty else {
                    throw JSONReadError(message: "the schema versions response needs a non-empty 'versions'", offset: 0)
                }
                return versions
            }
        } catch {
            throw .invalidResponse("the schema versions response is malformed: \(error)")
        }
    }

    /// One element of `versions`: `{"versionHash", "registeredAt": ISO 8601 or null, "schema": {...}}`.
    private static func decodeSchemaVersion(_ reader: inout JSONReader) throws -> SchemaVersion {
        let start = try reader.beginObject()
        var schema: SchemaDocument?
        var registeredAt: Date?
        while let key = try reader.nextKey() {
            if key.matches("schema") {
                // The document is taken as sent: its bytes go to the schema decoder, which checks its hash.
                reader.skipWhitespace()
                let first = reader.offset
                try reader.skipValue()
                let bytes = Data(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(reader.input)[first..<reader.offset]))
                schema = try SchemaDocument(jsonData: bytes)
            } else if key.matches("registeredAt") {
                if !reader.readNullIfPresent() {
                    let text = try reader.readString()
                    guard let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) else {
                        throw reader.failure("registeredAt '\(text)' is not an ISO 8601 time")
                    }
                    registeredAt = date
                }
            } else {
                try reader.skipValue()
            }
        }
        guard let schema else { throw JSONReadError(message: "a schema version needs 'schema'", offset: start) }
        return SchemaVersion(schema: schema, registeredAt: registeredAt)
    }

    /// What an error response's body says: `{"error": {"code", "message", …extra}}`.
    struct ErrorBody {
        var code: String
        var message: String
        /// `clock_skew`: the server's clock, in milliseconds since 1970.
        var serverTime: Double?
        /// `causality_violation`: the server's version vector.
        var vector: VersionVector?
        /// `unverified_author`: the author of the refused change set.
        var replica: ReplicaID?
    }

    /// The error body in `data`, or `nil` if it is not one (a proxy's HTML page, say): the
    /// caller then falls back on the status code.
    static func decodeErrorBody(_ data: Data) -> ErrorBody? {
        try? JSONReader.read(data) { reader in
            var body: ErrorBody?
            try reader.beginObject()
            while let key = try reader.nextKey() {
                guard key.matches("error") else {
                    try reader.skipValue()
                    continue
                }
                var code: String?
                var message: String?
                var serverTime: Double?
                var vector: VersionVector?
                var replica: ReplicaID?
                try reader.beginObject()
                while let member = try reader.nextKey() {
                    if member.matches("code") {
                        code = try reader.readString()
                    } else if member.matches("message") {
                        message = try reader.readString()
                    } else if member.matches("serverTime") {
                        if !reader.readNullIfPresent() { serverTime = try reader.readDouble() }
                    } else if member.matches("replica") {
                        if !reader.readNullIfPresent() { replica = UUID(storageText: try reader.readString()) }
                    } else if member.matches("vector") {
                        // A vector that cannot be read leaves the error itself readable.
                        let start = reader.offset
                        if !reader.readNullIfPresent() {
                            do {
                                vector = VersionVector(try reader.readReplicaMap())
                            } catch {
                                reader.offset = start
                                try reader.skipValue()
                            }
                        }
                    } else {
                        try reader.skipValue()
                    }
                }
                if let code, let message { body = ErrorBody(code: code, message: message, serverTime: serverTime, vector: vector, replica: replica) }
            }
            return body
        } ?? nil
    }
}
