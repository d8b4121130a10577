import Foundation
@testable import SyncEngine
import SyncKit
import Testing

/// Replays the server engineer's `Protocol/vectors/sequence-*.json` into fresh client stores:
/// the client must decode every batch the server accepted, apply it, and end with the rows the
/// server ended with. Skipped while the vectors are not on the branch.
@Suite struct ProtocolVectorReplayTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Protocol/vectors")

    static var sequenceFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasPrefix("sequence-") && $0.hasSuffix(".json") }.sorted()
    }

    @Test(.enabled(if: !sequenceFiles.isEmpty, "Protocol/vectors has no sequences yet"), arguments: sequenceFiles)
    func sequenceReplaysToTheExpectedRows(_ file: String) throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.directory.appendingPathComponent(file))) as? [String: Any])
        let schema = try SchemaDocument(jsonData: try JSONSerialization.data(withJSONObject: try #require(object["schema"])))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("vector-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let replica = try SyncReplica(store: try ObjectStore(path: path, schema: schema))
        for (index, step) in try #require(object["batches"] as? [[String: Any]]).enumerated() {
            let batch = try JSONSerialization.data(withJSONObject: try #require(step["batch"]))
            if step["expectStatus"] as? Int == 200 {
                _ = try replica.apply(try ChangeSetCoding.decode(batch).changeSets)
            } else {
                // The server refused it whole; the client must not end up with a part of it.
                let before = try Self.rows(at: path)
                _ = try? replica.apply(try ChangeSetCoding.decode(batch).changeSets)
                if let code = step["expectError"] as? String, ["causality_violation", "malformed_change_set", "schema_mismatch"].contains(code) {
                    #expect(NSDictionary(dictionary: try Self.rows(at: path)).isEqual(to: before), "\(file) batch \(index) (\(code)) changed rows")
                }
            }
        }
        let expected = try #require(object["expectedRows"] as? [String: Any])
        let actual = try Self.rows(at: path)
        #expect(NSDictionary(dictionary: actual).isEqual(to: expected), "\(file): rows differ\n\(actual)")
    }

    /// Every entity and join table: table -> rows in order of their first columns, each row
    /// column -> value in the protocol's SQL value encoding (as the server's vector test writes them).
    static func rows(at path: String) throws -> [String: Any] {
        let connection = try SQLiteConnection(path: path, readOnly: true)
        var result: [String: Any] = [:]
        for table in try connection.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%' ORDER BY name") {
            guard case .text(let name) = table[0] else { continue }
            let columns = try connection.rows("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(name)]).compactMap { row -> String? in
                if case .text(let column) = row[0] { return column }
                return nil
            }
            var rows: [[String: Any]] = []
            for row in try connection.rows("SELECT * FROM \"\(name)\" ORDER BY 1, 2") {
                var object: [String: Any] = [:]
                for (column, value) in zip(columns, row) {
                    object[column] = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(value), options: [.fragmentsAllowed])
                }
                rows.append(object)
            }
            result[name] = rows
        }
        return result
    }
}

/// The server's recorded responses (`Protocol/vectors/examples`) through the client's decoding:
/// every error body maps to its typed error, and push and pull bodies decode.
@Suite struct ProtocolExampleResponseTests {
    static let directory = ProtocolVectorReplayTests.directory.appendingPathComponent("examples")

    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
    }

    @Test(.enabled(if: !files.isEmpty, "Protocol/vectors/examples is not on the branch"), arguments: files)
    func responseDecodes(_ file: String) throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.directory.appendingPathComponent(file))) as? [String: Any])
        let request = try #require(object["request"] as? [String: Any]), response = try #require(object["response"] as? [String: Any])
        let status = try #require(response["status"] as? Int)
        guard let body = response["body"] else { return }
        let data = try JSONSerialization.data(withJSONObject: body, options: [.fragmentsAllowed])
        if status >= 400 {
            let code = try #require((body as? [String: Any])?["error"] as? [String: Any])["code"] as? String
            let error = HTTPTransport.error(status: status, body: data)
            #expect(error.code == code, "\(file): \(error)")
            #expect(!error.isTransient)
            if case .clockSkew(let serverTime, _) = error { #expect(serverTime.timeIntervalSince1970 > 1_600_000_000, "\(file)") }
            return
        }
        let path = request["path"] as? String ?? ""
        switch (request["method"] as? String, path.hasSuffix("/changesets")) {
        case ("POST"?, true):
            let push = try HTTPTransport.decodePushResult(data)
            #expect(!(push.applied + push.alreadyApplied).isEmpty, "\(file)")
            #expect(UInt64(push.cursor) != nil, "\(file): cursor \(push.cursor)")
        case ("GET"?, true):
            let pull = try HTTPTransport.decodePullPage(data)
            #expect(UInt64(pull.cursor) != nil, "\(file): cursor \(pull.cursor)")
        default:
            break
        }
    }
}
