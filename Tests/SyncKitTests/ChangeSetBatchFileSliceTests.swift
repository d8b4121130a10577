import Codecs
import Foundation
@testable import SyncEngine
import SyncKit
import Testing
import TestSupport

/// A change-set batch in a file, read a slice of operations at a time, gives the change set the
/// whole batch decodes to; the upload's hash computed a part at a time is the hash of the whole.
@Suite struct ChangeSetBatchFileSliceTests {
    static func sample(operations count: Int, seq: UInt64 = 1) -> ChangeSet {
        let replica = UUID()
        var operations: [SyncEngine.Operation] = []
        for index in 0..<count {
            let id = UUID()
            operations.append(.create(entity: "Member", id: id))
            operations.append(.set(entity: "Member", id: id, attribute: "name", values: [.text("member \(index) \"quoted\" ü")]))
        }
        return ChangeSet(dot: Dot(replica: replica, seq: seq), hlc: HLC(rawValue: 1_700_000_000_000 << 16),
                         vector: VersionVector([replica: seq]), operations: operations, authenticator: Array(repeating: 7, count: 32))
    }

    @Test(arguments: [1, 3, 7, 10_000])
    func slicesJoinToTheDecodedChangeSet(operationsPerSlice: Int) throws {
        let directory = try TemporaryDirectory(prefix: "batch-file")
        let changeSet = ChangeSetBatchFileSliceTests.sample(operations: 50)
        let path = directory.path + "/batch.json"
        try ChangeSetCoding.encode([changeSet], base: VersionVector()).write(to: URL(fileURLWithPath: path))
        let file = try ChangeSetBatchFile(path: path, operationsPerSlice: operationsPerSlice)
        #expect(file.headers.count == 1)
        var header = changeSet
        header.operations = []
        #expect(file.header == header)
        var slices: [[SyncEngine.Operation]] = []
        try file.forEachSlice { slices.append($0) }
        #expect(slices.flatMap { $0 } == changeSet.operations)
        #expect(slices.dropLast().allSatisfy { $0.count == operationsPerSlice })
        // A second reading gives the same operations (the merge reads them twice).
        var again: [SyncEngine.Operation] = []
        try file.forEachSlice { again += $0 }
        #expect(again == changeSet.operations)
    }

    @Test func aMalformedOperationIsFoundWhenItsSliceIsRead() throws {
        let directory = try TemporaryDirectory(prefix: "batch-file")
        let changeSet = ChangeSetBatchFileSliceTests.sample(operations: 20)
        var text = String(decoding: try ChangeSetCoding.encode([changeSet], base: VersionVector()), as: UTF8.self)
        let last = try #require(text.range(of: "\"create\"", options: .backwards))
        text.replaceSubrange(last, with: "\"crumble\"")
        let path = directory.path + "/batch.json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let file = try ChangeSetBatchFile(path: path, operationsPerSlice: 4)
        var read = 0
        let error = #expect(throws: SyncError.self) { try file.forEachSlice { read += $0.count } }
        #expect(error?.code == .malformedChangeSet)
        #expect(read > 0 && read < changeSet.operations.count)
    }

    @Test func aBatchOfSeveralChangeSetsIsDecodedWhole() throws {
        let directory = try TemporaryDirectory(prefix: "batch-file")
        let first = ChangeSetBatchFileSliceTests.sample(operations: 3)
        var second = ChangeSetBatchFileSliceTests.sample(operations: 2, seq: 2)
        second.dot = Dot(replica: first.dot.replica, seq: 2)
        second.vector = VersionVector([first.dot.replica: 2])
        let path = directory.path + "/batch.json"
        try ChangeSetCoding.encode([first, second], base: VersionVector()).write(to: URL(fileURLWithPath: path))
        let file = try ChangeSetBatchFile(path: path)
        #expect(file.headers.count == 2)
        #expect(try file.decodeWhole() == [first, second])
    }

    @Test func aHashOverPartsIsTheHashOfTheWhole() {
        var random = SeededGenerator(seed: 11)
        let bytes = (0..<10_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        for partSize in [1, 63, 64, 65, 1000, 10_000] {
            var hasher = SHA256()
            for start in stride(from: 0, to: bytes.count, by: partSize) { hasher.update(bytes[start..<min(start + partSize, bytes.count)]) }
            #expect(hasher.finish() == SHA256.hash(bytes), "parts of \(partSize)")
        }
        #expect(LowercaseHex.encode(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }
}
