import Foundation
@testable import SyncEngine
import Testing

/// The client's reading of an upload's status (`POST .../uploads`, `GET .../uploads/{id}`): what
/// it resumes from, and a clear error naming what is wrong when the answer is malformed.
@Suite struct UploadStatusTests {
    @Test func anUploadStatusListsTheReceivedPartsByNumber() throws {
        let answer = Data("""
            {"upload": "u1", "totalBytes": 9, "sha256": "\(String(repeating: "a", count: 64))", "maxPartBytes": 4,
             "committed": false, "expiresAt": 12, "future": {"x": [1, 2]},
             "parts": [{"number": 2, "bytes": 4, "sha256": "bb"}, {"number": 1, "bytes": 4, "sha256": "aa"}]}
            """.utf8)
        let status = try HTTPTransport.UploadStatus(answer)
        #expect(status.id == "u1")
        #expect(status.maxPartBytes == 4)
        #expect(status.isCommitted == false)
        #expect(status.receivedParts == [1: "aa", 2: "bb"])
    }

    @Test func aCommittedUploadWithoutPartsIsReadAsCommitted() throws {
        let status = try HTTPTransport.UploadStatus(Data(#"{"upload": "u2", "maxPartBytes": 8, "committed": true, "parts": []}"#.utf8))
        #expect(status.isCommitted)
        #expect(status.receivedParts.isEmpty)
    }

    @Test(arguments: [
        (#"{"maxPartBytes": 8, "parts": []}"#, "'upload'"),
        (#"{"upload": "u", "maxPartBytes": 0, "parts": []}"#, "'maxPartBytes' must be at least 1"),
        (#"{"upload": "u", "maxPartBytes": 8, "parts": [{"number": 0, "sha256": "aa"}]}"#, "'number' of at least 1"),
        (#"{"upload": "u", "maxPartBytes": "8", "parts": []}"#, "maxPartBytes"),
        (#"{"upload": "u", "upload": "v", "maxPartBytes": 8, "parts": []}"#, "upload"),
    ])
    func aMalformedUploadStatusIsAnInvalidResponseSayingWhatIsWrong(answer: String, named: String) {
        #expect {
            _ = try HTTPTransport.UploadStatus(Data(answer.utf8))
        } throws: { error in
            guard case .invalidResponse(let message) = error as? SyncClientError else { return false }
            return message.hasPrefix("the upload response is malformed") && message.contains(named)
        }
    }
}
