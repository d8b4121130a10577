// Test support only, not part of the product: a child process for
// Tests/SyncKitTests/CrashSafetyTests.swift, which kills it with SIGKILL at chosen moments
// and then checks the store it left behind.
//
//     SyncCrashHelper save <store path> <count>
//         Makes <count> saves (each one change set: a new CrashNote appended to the one
//         CrashBook, and the book's title), and after each commit prints "commit <seq>", then
//         moves it through the outbox like a sync client would: marks it sent ("sent <seq>")
//         and the one before acknowledged ("ack <seq>").
//     SyncCrashHelper apply <store path> <batch file>
//         Decodes a ChangeSetCoding batch, prints "applying <count>", applies it in one merge
//         and prints "applied <count>".
//
// Every line is flushed as soon as it is written, so the test knows what was committed before
// the kill. The schema below must stay identical to the one in CrashSafetyTests.swift.
import Foundation
import SyncKit

@Entity final class CrashBook {
    var title: String = ""
    @Relationship(inverse: "book", deleteRule: .cascade) var notes: [CrashNote] = []
}

@Entity final class CrashNote {
    var index: Int = 0
    var text: String = ""
    @Relationship(inverse: "notes", deleteRule: .nullify) var book: CrashBook?
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("SyncCrashHelper: " + message + "\n").utf8))
    exit(2)
}

func save(path: String, count: Int) throws {
    let store = try ObjectStore(path: path, entities: [CrashBook.self, CrashNote.self])
    let replica = try SyncReplica(store: store)
    let context = try store.makeContext()
    var book = try context.fetchAll(CrashBook.self).first
    for _ in 0..<count {
        let seq = try replica.versionVector()[replica.replicaID] + 1
        if book == nil {
            let created = CrashBook()
            context.insert(created)
            book = created
        }
        let note = CrashNote()
        note.index = Int(seq)
        note.text = String(repeating: "note \(seq) ", count: 8)
        book!.addToNotes(note)
        book!.title = "after \(seq)"
        try context.save()
        let committed = try replica.versionVector()[replica.replicaID]
        guard committed == seq else { fail("expected seq \(seq) after the save, the vector says \(committed)") }
        say("commit \(seq)")
        try replica.mark([Dot(replica: replica.replicaID, seq: seq)], as: .sent)
        say("sent \(seq)")
        if seq > 1 {
            try replica.mark([Dot(replica: replica.replicaID, seq: seq - 1)], as: .acknowledged)
            say("ack \(seq - 1)")
        }
    }
    say("done")
}

func apply(path: String, batchPath: String) throws {
    let store = try ObjectStore(path: path, entities: [CrashBook.self, CrashNote.self])
    let replica = try SyncReplica(store: store)
    let batch = try ChangeSetCoding.decode(try Data(contentsOf: URL(fileURLWithPath: batchPath)))
    say("applying \(batch.changeSets.count)")
    let result = try replica.apply(batch.changeSets)
    say("applied \(result.applied.count)")
}

let arguments = CommandLine.arguments
do {
    switch (arguments.count, arguments.count > 1 ? arguments[1] : "") {
    case (4, "save"):
        guard let count = Int(arguments[3]) else { fail("count must be a number") }
        try save(path: arguments[2], count: count)
    case (4, "apply"):
        try apply(path: arguments[2], batchPath: arguments[3])
    default:
        fail("usage: SyncCrashHelper save <store> <count> | apply <store> <batch file>")
    }
} catch {
    fail("\(error)")
}
