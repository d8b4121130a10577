import Codecs
import Foundation
import HTTPServer
import PostgreSQLClient
import SyncEngine

/// How large change sets travel: uploads (`POST .../uploads`, `PUT .../uploads/{id}/parts/{n}`,
/// `GET .../uploads/{id}`, `POST .../uploads/{id}/commit`) and the parts of a change set a pull
/// hands out by reference (`GET .../changesets/{entry}/parts/{n}`). See "Large change sets" in
/// `Protocol/README.md`.
enum TransferRoutes {
    static let uploads = "/v1/datasets/{dataset}/uploads"
    static let upload = "/v1/datasets/{dataset}/uploads/{upload}"
    static let uploadPart = "/v1/datasets/{dataset}/uploads/{upload}/parts/{part}"
    static let commit = "/v1/datasets/{dataset}/uploads/{upload}/commit"
    static let downloadPart = "/v1/datasets/{dataset}/changesets/{entry}/parts/{part}"
    /// Part numbers run from 1 to this.
    static let maxPartNumber = 100_000

    static func register(in router: inout Router, _ context: RouteContext) {
        let writeAdmission = context.datasetAdmission(for: .readWrite)
        router.add(.post, uploads, admission: writeAdmission) { request, parameters in
            let dataset = try context.authorizedDataset(request, parameters, for: .readWrite)
            _ = try dataset.requireEngine()
            let staging = try context.transfers.staging(of: dataset)
            let (totalBytes, sha256) = try uploadDeclaration(request.body, limit: context.transfers.maxUploadBytes)
            let upload = try staging.createUpload(totalBytes: totalBytes, sha256: sha256)
            var response = HTTPResponse.json(status: .created, data: uploadAnswer(upload, partBytes: context.transfers.partBytes).data)
            response.headers.replaceOrAdd(name: "Location", value: "/v1/datasets/\(dataset.name)/uploads/\(upload.id)")
            return response
        }
        router.add(.get, upload, admission: writeAdmission) { request, parameters in
            let dataset = try context.authorizedDataset(request, parameters, for: .readWrite)
            let staging = try context.transfers.staging(of: dataset)
            let upload = try staged { try staging.upload(parameters["upload"] ?? "") }
            return .json(data: uploadAnswer(upload, partBytes: context.transfers.partBytes).data)
        }
        router.add(.put, uploadPart, admission: writeAdmission) { request, parameters in
            let dataset = try context.authorizedDataset(request, parameters, for: .readWrite)
            let staging = try context.transfers.staging(of: dataset)
            let number = try partNumber(parameters["part"])
            guard let hash = request.headers["Sync-Part-SHA256"], hash.utf8.count == 64, LowercaseHex.decode(hash) != nil else {
                throw APIError.invalidParameter("a part needs the SHA-256 of its bytes in Sync-Part-SHA256 (64 hex digits)")
            }
            let id = parameters["upload"] ?? ""
            try staged { try staging.storePart(number, of: id, bytes: request.body, sha256: hash) }
            return .json(data: JSONValue.object([
                "upload": .string(id), "part": .integer(Int64(number)), "bytes": .integer(Int64(request.body.count)),
            ]).data)
        }
        router.add(.post, commit, admission: writeAdmission) { request, parameters in
            let dataset = try context.authorizedDataset(request, parameters, for: .readWrite)
            let staging = try context.transfers.staging(of: dataset)
            let id = parameters["upload"] ?? ""
            let pusher = try ChangeSetRoutes.pusher(of: request)
            return .json(data: try UploadCommit.commit(upload: id, of: staging, to: dataset, pushedBy: pusher, context))
        }
        router.add(.get, downloadPart, admission: context.datasetAdmission) { request, parameters in
            let dataset = try context.authorizedDataset(request, parameters)
            let staging = try context.transfers.staging(of: dataset)
            guard let entryText = parameters["entry"], let entry = ChangeSetRoutes.PullQuery.decimal(entryText) else {
                throw APIError.invalidParameter("the entry must be the one a pull page's largeChangeSet names")
            }
            let number = try partNumber(parameters["part"])
            let bytes = try staged { try staging.downloadPart(entry: entry, number: number) }
            return HTTPResponse(status: .ok, headers: ["Content-Type": "application/octet-stream"], body: bytes)
        }
    }

    /// `{"totalBytes": N, "sha256": "<hex>"}`, checked.
    static func uploadDeclaration(_ body: Data, limit: Int64) throws -> (Int64, String) {
        let total: Int64, sha256: String
        do {
            (total, sha256) = try JSONReader.read(body) { reader in
                let start = try reader.beginObject()
                var total: Int64?, sha256: String?
                while let key = try reader.nextKey() {
                    if key.matches("totalBytes") {
                        try JSONReadError.checkFirst(total, "totalBytes", reader)
                        total = try JSONReadError.at(.key("totalBytes")) { try reader.readInteger() }
                    } else if key.matches("sha256") {
                        try JSONReadError.checkFirst(sha256, "sha256", reader)
                        sha256 = try JSONReadError.at(.key("sha256")) { try reader.readString() }
                    } else {
                        try reader.skipValue()
                    }
                }
                guard let total, let sha256 else { throw JSONReadError(message: "'totalBytes' and 'sha256' are required", offset: start) }
                return (total, sha256)
            }
        } catch {
            throw APIError.invalidParameter("an upload is declared as {\"totalBytes\": N, \"sha256\": \"<64 hex digits>\"}: \(error)")
        }
        // A malformed declaration is refused as such whatever size it declares: only a well-formed
        // one is judged against the limit.
        guard total >= 1 else {
            throw APIError.invalidParameter("totalBytes is the size of the upload, at least 1, not \(total)")
        }
        guard sha256.utf8.count == 64, LowercaseHex.decode(sha256) != nil else {
            throw APIError.invalidParameter("sha256 must be the SHA-256 of the whole upload, 64 hex digits")
        }
        guard total <= limit else {
            throw APIError(.contentTooLarge, "payload_too_large", "an upload holds 1 to \(limit) bytes, not \(total)")
        }
        return (total, sha256.lowercased())
    }

    static func partNumber(_ text: String?) throws -> Int {
        guard let text, let value = ChangeSetRoutes.PullQuery.decimal(text), value >= 1, value <= Int64(maxPartNumber) else {
            throw APIError.invalidParameter("a part number is an integer from 1 to \(maxPartNumber), not '\((text ?? "").prefix(40))'")
        }
        return Int(value)
    }

    static func uploadAnswer(_ upload: TransferStaging.Upload, partBytes: Int) -> JSONValue {
        .object([
            "upload": .string(upload.id), "totalBytes": .integer(upload.totalBytes), "sha256": .string(upload.sha256),
            "maxPartBytes": .integer(Int64(partBytes)), "committed": .bool(upload.result != nil),
            "receivedBytes": .integer(upload.parts.reduce(0) { $0 + $1.bytes }),
            "parts": .array(upload.parts.map { .object(["number": .integer(Int64($0.number)), "bytes": .integer($0.bytes), "sha256": .string($0.sha256)]) }),
            "expiresAt": .string(Date(timeIntervalSince1970: Double(upload.expiresAt) / 1000).formatted(.iso8601)),
        ])
    }

    /// Runs a staging call, answering its failures with the protocol's errors.
    static func staged<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as TransferStaging.Failure {
            switch failure {
            case .unknownUpload(let id):
                throw APIError(.notFound, "upload_not_found", "no upload \(id.prefix(64)) is staged (it expired, or was never created): start a new one")
            case .partHashMismatch(let number, let expected, let received):
                throw APIError(.badRequest, "part_hash_mismatch",
                               "part \(number) has SHA-256 \(received), not the \(expected) its Sync-Part-SHA256 names: send it again")
            case .uploadTooLarge(let id, let declared, let received):
                throw APIError(.contentTooLarge, "payload_too_large", "upload \(id) was declared with \(declared) bytes; its parts would hold \(received)")
            case .alreadyCommitted(let id):
                throw APIError(.conflict, "upload_committed", "upload \(id) is committed; its parts can no longer change")
            case .incomplete(let id, let missing):
                throw APIError(.conflict, "upload_incomplete", "upload \(id) is not complete: \(missing)")
            case .uploadHashMismatch(let id, let expected, let received):
                throw APIError(.conflict, "upload_hash_mismatch",
                               "upload \(id)'s parts joined have SHA-256 \(received), not the declared \(expected): send the parts again")
            case .unknownDownload(let entry, let part):
                throw APIError(.notFound, "transfer_not_found",
                               "part \(part) of the change set at log entry \(entry) is not staged (it expired): pull the page again")
            }
        }
    }
}

/// The staging of each dataset's large transfers, with the limits that apply to them.
final class TransferRegistry: @unchecked Sendable {
    // @unchecked: `stagings` is only accessed while holding `lock`.
    /// The largest part of an upload or download, and of a pull page before it hands out a
    /// change set by reference.
    let partBytes: Int
    /// The largest upload.
    let maxUploadBytes: Int64
    /// How long staged parts are kept after they were last touched.
    let lifetimeMilliseconds: UInt64
    /// The database several servers share, where staging lives so that each of them serves it;
    /// `nil`: staging lives in each dataset's directory.
    private let sharedDatabase: PostgreSQLConnectionPool?
    /// Connections holding the commit locks of shared staging (see ``PostgreSQLTransferStaging``).
    private let commitLocks: PostgreSQLConnectionPool?
    private let clock: @Sendable () -> UInt64
    private let lock = NSLock()
    private var stagings: [String: any TransferStore] = [:]

    init(partBytes: Int, maxUploadBytes: Int64, lifetimeMilliseconds: UInt64, sharedDatabase: PostgreSQLConnectionPool?,
         clock: @escaping @Sendable () -> UInt64) {
        self.partBytes = max(1024, partBytes)
        self.maxUploadBytes = maxUploadBytes
        self.lifetimeMilliseconds = lifetimeMilliseconds
        self.sharedDatabase = sharedDatabase
        commitLocks = sharedDatabase.map { PostgreSQLConnectionPool(url: $0.url, maximumConnections: 4) }
        self.clock = clock
    }

    /// The staging of `dataset`.
    func staging(of dataset: DatasetStore) throws -> any TransferStore {
        lock.lock()
        defer { lock.unlock() }
        if let staging = stagings[dataset.name] { return staging }
        let staging: any TransferStore
        if let sharedDatabase, let commitLocks {
            staging = PostgreSQLTransferStaging(dataset: dataset.name, pool: sharedDatabase, commitLocks: commitLocks,
                                                lifetimeMilliseconds: lifetimeMilliseconds, clock: clock)
        } else {
            staging = TransferStaging(path: dataset.directory.appendingPathComponent("staging.sqlite").path,
                                      lifetimeMilliseconds: lifetimeMilliseconds, clock: clock)
        }
        stagings[dataset.name] = staging
        return staging
    }
}
