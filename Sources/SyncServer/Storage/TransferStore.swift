import Foundation

/// Where one dataset's large change sets in transit are kept: uploads a client sends part by
/// part before it commits them as one push, and the encodings of large change sets a pull hands
/// out by reference, which clients fetch part by part (see "Large change sets" in
/// `Protocol/README.md`).
///
/// ``TransferStaging`` keeps them in a SQLite file next to the dataset, for one server;
/// ``PostgreSQLTransferStaging`` keeps them in the PostgreSQL database several servers share,
/// so that a client may send, report, commit and fetch parts through any of them.
package protocol TransferStore: AnyObject, Sendable {
    /// Starts an upload of `totalBytes` bytes whose SHA-256 is `sha256`, removing uploads and
    /// downloads untouched for longer than their lifetime first.
    func createUpload(totalBytes: Int64, sha256: String) throws -> TransferStaging.Upload

    /// The upload `id` with the parts received so far.
    ///
    /// - Throws: ``TransferStaging/Failure/unknownUpload(_:)`` when it is not staged.
    func upload(_ id: String) throws -> TransferStaging.Upload

    /// Stores part `number` of upload `id` after checking `bytes` against `sha256`; a part sent
    /// again replaces the one stored.
    func storePart(_ number: Int, of id: String, bytes: Data, sha256: String) throws

    /// Calls `consume` with the upload's parts in order, one at a time, once parts `1...n` are
    /// all there with the declared size; throws after the last one when their bytes joined do
    /// not have the declared hash. Only one part is in memory at a time.
    func forEachAssembledPart(of id: String, _ consume: (Data) throws -> Void) throws

    /// Commits upload `id` once: the first call runs `push` (which applies the upload and
    /// answers the push result) and records its answer, dropping the parts; every other call,
    /// also one made at the same time (through another server sharing the store), waits for it
    /// and answers the recorded result unchanged.
    func commit(_ id: String, by push: () throws -> Data) throws -> Data

    /// Stages `body` (a change-set batch holding the change set at log entry `entry`) in parts
    /// of `partBytes`, unless it is staged already, and describes it.
    func stageDownload(entry: Int64, body: Data, partBytes: Int) throws -> TransferStaging.Download

    /// Part `number` (from 1) of the download staged for log entry `entry`.
    ///
    /// - Throws: ``TransferStaging/Failure/unknownDownload(entry:part:)`` when it is not staged.
    func downloadPart(entry: Int64, number: Int) throws -> Data
}

extension TransferStaging: TransferStore {
    /// Commits upload `id` once; commits of the dataset run one at a time, so a commit made
    /// while another is applying the same upload answers that one's result.
    package func commit(_ id: String, by push: () throws -> Data) throws -> Data {
        commitLock.lock()
        defer { commitLock.unlock() }
        if let result = try upload(id).result { return result }
        let answer = try push()
        try recordCommit(of: id, result: answer)
        return answer
    }
}

extension TransferStaging {
    /// Throws ``Failure/incomplete(id:missing:)`` unless parts `1...n` of `upload` are all there
    /// and hold its declared size.
    static func checkComplete(_ upload: Upload) throws {
        let numbers = upload.parts.map(\.number)
        let expected = Array(1...max(1, numbers.last ?? 1))
        let received = upload.parts.reduce(Int64(0)) { $0 + $1.bytes }
        guard numbers == expected, received == upload.totalBytes else {
            let missing = Set(expected).subtracting(numbers).sorted().prefix(20).map(String.init).joined(separator: ", ")
            throw Failure.incomplete(id: upload.id, missing: missing.isEmpty
                ? "\(received) of \(upload.totalBytes) bytes arrived; send the remaining parts after part \(numbers.last ?? 0)"
                : "parts \(missing) are missing (\(received) of \(upload.totalBytes) bytes arrived)")
        }
    }
}
