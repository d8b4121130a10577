import Foundation
@testable import HTTPServer
import Testing

@testable import SyncServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct LogWriterTests {
    /// A temporary file opened for writing; removed when the test ends.
    final class LogFile {
        let path: String
        let descriptor: Int32

        init() {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("logwriter-\(UUID().uuidString).log").path
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        }

        deinit {
            close(descriptor)
            unlink(path)
        }

        var lines: [Substring] {
            ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        }

        var text: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
    }

    @Test func linesReachTheDescriptorPromptlyWithoutAFlush() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let writer = LogWriter(descriptor: ends[1], batchDelay: .milliseconds(5))
        defer { writer.close() }
        writer.write("first line")
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        let deadline = Date().addingTimeInterval(1)
        while !received.contains(0x0A) && Date() < deadline {
            var ready = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 50) == 1 else { continue }
            let count = read(ends[0], &buffer, buffer.count)
            if count > 0 { received += buffer[0..<count] }
        }
        #expect(String(decoding: received, as: UTF8.self) == "first line\n")
    }

    @Test func flushAndCloseWriteWhatIsQueuedAndNothingEarlierWhileBatching() {
        let file = LogFile()
        // A batch delay longer than the test: only flush() and close() can write.
        let writer = LogWriter(descriptor: file.descriptor, batchDelay: .seconds(60))
        writer.write("one")
        writer.write("two")
        usleep(50_000)
        #expect(file.text.isEmpty)
        writer.flush()
        #expect(file.lines == ["one", "two"])
        writer.write("three")
        writer.close()
        #expect(file.lines == ["one", "two", "three"])
        // After close, lines are written before write(_:) returns.
        writer.write("four")
        #expect(file.lines == ["one", "two", "three", "four"])
    }

    @Test func concurrentWritersNeverInterleaveOrLoseLinesEvenWhenTheBufferIsFull() async {
        let file = LogFile()
        // A tiny buffer makes writers wait for the thread again and again.
        let writer = LogWriter(descriptor: file.descriptor, batchDelay: .milliseconds(1), maxPendingBytes: 100)
        let threads = 8, perThread = 400
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<threads {
                group.addTask {
                    for index in 0..<perThread {
                        writer.write("writer \(thread) line \(index) " + String(repeating: "x", count: index % 50))
                    }
                }
            }
        }
        writer.close()
        let lines = file.lines
        #expect(lines.count == threads * perThread)
        for thread in 0..<threads {
            let own = lines.filter { $0.hasPrefix("writer \(thread) ") }
            let expected = (0..<perThread).map { "writer \(thread) line \($0) " + String(repeating: "x", count: $0 % 50) }
            #expect(own.map(String.init) == expected, "writer \(thread)'s lines are damaged or out of order")
        }
    }
}
