import Codecs
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A change set a pull page hands out by reference because it is larger than a page may be
/// (see "Large change sets" in `Protocol/README.md`).
public struct LargeChangeSetReference: Sendable, Equatable {
    /// The log entry holding it: the page's cursor.
    public var entry: String
    /// The size of its encoding (a change-set batch holding it alone).
    public var totalBytes: Int64
    /// The SHA-256 of its encoding, as 64 lowercase hex digits.
    public var sha256: String
    /// How many parts it is served in, numbered from 1.
    public var parts: Int

    /// Reads the `largeChangeSet` object of a pull page.
    init(_ reader: inout JSONReader) throws {
        let start = try reader.beginObject()
        var entry: String?, totalBytes: Int64?, sha256: String?, parts: Int64?
        while let key = try reader.nextKey() {
            if key.matches("entry") {
                entry = try reader.readString()
            } else if key.matches("totalBytes") {
                totalBytes = try reader.readInteger()
            } else if key.matches("sha256") {
                sha256 = try reader.readString()
            } else if key.matches("parts") {
                parts = try reader.readInteger()
            } else {
                try reader.skipValue()
            }
        }
        guard let entry, let totalBytes, let sha256, let parts, parts >= 1, parts <= 100_000, totalBytes >= 1 else {
            throw JSONReadError(message: "largeChangeSet needs 'entry', 'totalBytes', 'sha256' and 'parts'", offset: start)
        }
        self.entry = entry
        self.totalBytes = totalBytes
        self.sha256 = sha256.lowercased()
        self.parts = Int(parts)
    }
}

extension HTTPTransport {
    /// An upload as the server reports it.
    struct UploadStatus: Sendable {
        var id: String
        /// The largest part the server takes.
        var maxPartBytes: Int
        /// The SHA-256 of each part received, by part number.
        var receivedParts: [Int: String]
        var isCommitted: Bool

        /// `{"upload": "…", "maxPartBytes": N, "committed": false, "parts": [{"number": 1, "sha256": "…"}, …]}`;
        /// other keys are skipped, as the protocol asks of clients.
        init(_ data: Data) throws(SyncClientError) {
            do {
                (id, maxPartBytes, isCommitted, receivedParts) = try JSONReader.read(data) { reader in
                    let start = try reader.beginObject()
                    var id: String?, maxPartBytes: Int64?, committed: Bool?, parts: [Int: String]?
                    while let key = try reader.nextKey() {
                        if key.matches("upload") {
                            try JSONReadError.checkFirst(id, "upload", reader)
                            id = try JSONReadError.at(.key("upload")) { try reader.readString() }
                        } else if key.matches("maxPartBytes") {
                            try JSONReadError.checkFirst(maxPartBytes, "maxPartBytes", reader)
                            maxPartBytes = try JSONReadError.at(.key("maxPartBytes")) { try reader.readInteger() }
                        } else if key.matches("committed") {
                            try JSONReadError.checkFirst(committed, "committed", reader)
                            committed = try JSONReadError.at(.key("committed")) { try reader.readBool() }
                        } else if key.matches("parts") {
                            try JSONReadError.checkFirst(parts, "parts", reader)
                            parts = try JSONReadError.at(.key("parts")) { try Self.readParts(&reader) }
                        } else {
                            try reader.skipValue()
                        }
                    }
                    guard let id, let maxPartBytes, let parts else {
                        throw JSONReadError(message: "an upload needs 'upload', 'maxPartBytes' and 'parts'", offset: start)
                    }
                    guard maxPartBytes >= 1, maxPartBytes <= Int64(Int.max) else {
                        throw JSONReadError(message: "'maxPartBytes' must be at least 1, not \(maxPartBytes)", offset: start)
                    }
                    return (id, Int(maxPartBytes), committed ?? false, parts)
                }
            } catch {
                throw .invalidResponse("the upload response is malformed: \(error)")
            }
        }

        /// `[{"number": 1, "sha256": "…", "bytes": N}, …]`: the SHA-256 of each part by number.
        private static func readParts(_ reader: inout JSONReader) throws -> [Int: String] {
            var parts: [Int: String] = [:]
            try reader.beginArray()
            while try reader.nextElement() {
                let start = try reader.beginObject()
                var number: Int64?, sha256: String?
                while let key = try reader.nextKey() {
                    if key.matches("number") {
                        number = try JSONReadError.at(.key("number")) { try reader.readInteger() }
                    } else if key.matches("sha256") {
                        sha256 = try JSONReadError.at(.key("sha256")) { try reader.readString() }
                    } else {
                        try reader.skipValue()
                    }
                }
                guard let number, let sha256, number >= 1, number <= Int64(Int.max) else {
                    throw JSONReadError(message: "a part needs a 'number' of at least 1 and its 'sha256'", offset: start)
                }
                parts[Int(number)] = sha256
            }
            return parts
        }
    }

    /// Pushes one encoded batch too large for a single request through an upload: declares it,
    /// sends the parts the server lacks, and commits them as one push, which the server applies
    /// atomically. `resumable` is an upload started before for the same bytes (its ID, from
    /// `started`), which is resumed when the server still has it.
    ///
    /// - Parameters:
    ///   - partBytes: the largest part to send (the server's own limit, if smaller, wins).
    ///   - started: called with the upload's ID once the server has it, before any part is sent,
    ///     so that a client stopped mid-way resumes it rather than starting over.
    func pushThroughUpload(
        _ body: Data, as pusher: ReplicaCredentials?, partBytes: Int, resumable: String?, started: (String) async throws(HTTPFailure) -> Void
    ) async throws(HTTPFailure) -> PushResult {
        let sha256 = LowercaseHex.encode(SHA256.hash(body))
        var upload: UploadStatus?
        if let resumable {
            do throws(HTTPFailure) {
                let data = try await sendDetailed("GET", path: "uploads/\(resumable)").data
                do throws(SyncClientError) { upload = try UploadStatus(data) } catch { throw HTTPFailure(error: error) }
            } catch {
                // An upload the server no longer has (it expired) starts over.
                guard error.error.code == "upload_not_found" else { throw error }
            }
        }
        if upload == nil {
            let declaration = JSONValue.object(["totalBytes": .integer(Int64(body.count)), "sha256": .string(sha256)]).data
            let created = try await sendDetailed("POST", path: "uploads", body: declaration).data
            do throws(SyncClientError) { upload = try UploadStatus(created) } catch { throw HTTPFailure(error: error) }
            try await started(upload!.id)
        }
        guard let upload else { throw HTTPFailure(error: .local("no upload")) }
        if !upload.isCommitted {
            let size = max(1, min(partBytes, upload.maxPartBytes))
            var number = 1
            var offset = 0
            while offset < body.count {
                let part = body.subdata(in: offset..<min(body.count, offset + size))
                let hash = LowercaseHex.encode(SHA256.hash(part))
                if upload.receivedParts[number] != hash {
                    _ = try await sendDetailed("PUT", path: "uploads/\(upload.id)/parts/\(number)", body: part,
                                               headers: ["Content-Type": "application/octet-stream", "Sync-Part-SHA256": hash])
                }
                offset += part.count
                number += 1
            }
        }
        let data = try await sendDetailed("POST", path: "uploads/\(upload.id)/commit", headers: HTTPTransport.replicaHeaders(pusher)).data
        do throws(SyncClientError) {
            return try HTTPTransport.decodePushResult(data)
        } catch {
            throw HTTPFailure(error: error)
        }
    }

    /// Fetches the parts of a change set a pull page handed out by reference, checks their
    /// hash, and decodes them. A part the server no longer stages (it expired) is
    /// ``SyncClientError/server(code:message:status:)`` `transfer_not_found`: pull the page again.
    public func fetchLargeChangeSet(_ reference: LargeChangeSetReference) async throws(SyncClientError) -> [ChangeSet] {
        var body = Data(capacity: Int(clamping: reference.totalBytes))
        try await forEachPart(of: reference) { body.append($0) }
        do {
            return try ChangeSetCoding.decode(body).changeSets
        } catch {
            throw .invalidResponse("the change set at log entry \(reference.entry) is malformed: \(error)")
        }
    }

    /// Fetches the parts of a change set a pull page handed out by reference into a new file at
    /// `path`, one part in memory at a time, and checks their size and hash; the file then holds
    /// the change-set batch, to be read in slices (``SyncReplica/apply(slices:)``).
    func downloadLargeChangeSet(_ reference: LargeChangeSetReference, to path: String) async throws(SyncClientError) {
        guard FileManager.default.createFile(atPath: path, contents: nil), let output = FileHandle(forWritingAtPath: path) else {
            throw .local("cannot create \(path) for the change set at log entry \(reference.entry)")
        }
        defer { try? output.close() }
        try await forEachPart(of: reference) { (part: Data) throws(SyncClientError) in
            do {
                try output.write(contentsOf: part)
            } catch {
                throw .local("cannot write the change set at log entry \(reference.entry) to \(path): \(error)")
            }
        }
    }

    /// Fetches parts 1...n of `reference` in order, hashing them as they come, and hands each to
    /// `consume`; throws once they are all there when their size or hash is not the one named.
    private func forEachPart(of reference: LargeChangeSetReference,
                             _ consume: (Data) throws(SyncClientError) -> Void) async throws(SyncClientError) {
        var hasher = SHA256()
        var received: Int64 = 0
        for number in 1...reference.parts {
            let part = try await send("GET", path: "changesets/\(reference.entry)/parts/\(number)")
            hasher.update(part)
            received += Int64(part.count)
            try consume(part)
        }
        let hash = LowercaseHex.encode(hasher.finish())
        guard received == reference.totalBytes, hash == reference.sha256 else {
            throw .invalidResponse(
                "the parts of the change set at log entry \(reference.entry) hold \(received) bytes with SHA-256 \(hash), not the \(reference.totalBytes) bytes with \(reference.sha256) the page named")
        }
    }
}
