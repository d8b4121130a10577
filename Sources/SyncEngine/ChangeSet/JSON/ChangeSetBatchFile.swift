import Codecs
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A change-set batch (the JSON of a push body or of a large change set's parts) in a file,
/// mapped into memory read-only and read without decoding it whole: a batch holding one change
/// set is read a slice of operations at a time (``ChangeSetSlices``), and the pages a slice was
/// read from are handed back to the system once it is decoded, so memory holds about one slice
/// however large the file is.
///
/// Opening the file reads the batch once without decoding any operation: it checks the JSON of
/// everything but the operations, reads each change set's header and notes where its
/// operations lie (a malformed operation is found when its slice is read, and refuses the
/// merge, which runs in one transaction).
package final class ChangeSetBatchFile: ChangeSetSlices, @unchecked Sendable {
    // @unchecked: every stored property is set once; the mapping is read-only and each reading
    // keeps its position in locals.
    package let path: String
    /// The change sets of the batch without their operations.
    package let headers: [ChangeSet]
    /// Operations per slice.
    package let operationsPerSlice: Int
    private let descriptor: Int32
    private let mapping: UnsafeMutableRawPointer
    private let byteCount: Int
    private let operations: [Range<Int>]

    /// Maps the batch at `path` and reads its change sets' headers.
    ///
    /// - Throws: ``SyncError`` `.malformedChangeSet` naming what is wrong and where, or
    ///   `.notSyncable` when the file cannot be read.
    package init(path: String, operationsPerSlice: Int = 10_000) throws {
        self.path = path
        self.operationsPerSlice = max(1, operationsPerSlice)
        descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw SyncError(.notSyncable, "cannot open the change-set batch \(path): errno \(errno)") }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_size > 0 else {
            close(descriptor)
            throw SyncError(.malformedChangeSet, "the change-set batch \(path) is empty or unreadable")
        }
        byteCount = Int(status.st_size)
        guard let mapped = mmap(nil, byteCount, PROT_READ, MAP_PRIVATE, descriptor, 0), mapped != UnsafeMutableRawPointer(bitPattern: -1) else {
            close(descriptor)
            throw SyncError(.notSyncable, "cannot map the change-set batch \(path) (\(byteCount) bytes): errno \(errno)")
        }
        mapping = mapped
        let bytes = UnsafeBufferPointer(start: mapped.assumingMemoryBound(to: UInt8.self), count: byteCount)
        do {
            (headers, _, operations) = try JSONReader.read(bytes: bytes) { try $0.readChangeSetBatch(readingOperations: false) }
        } catch let error as JSONReadError {
            munmap(mapped, byteCount)
            close(descriptor)
            throw SyncError(.malformedChangeSet, "the change-set batch is malformed: \(error)")
        }
        release(upTo: byteCount)
    }

    deinit {
        munmap(mapping, byteCount)
        close(descriptor)
    }

    /// The only change set of a batch that holds one.
    package var header: ChangeSet {
        precondition(headers.count == 1, "a change-set batch read in slices holds one change set")
        return headers[0]
    }

    /// The whole batch decoded at once, as ``ChangeSetCoding/decode(_:)`` decodes it: for a batch
    /// of several change sets.
    package func decodeWhole() throws -> [ChangeSet] {
        let bytes = UnsafeBufferPointer(start: mapping.assumingMemoryBound(to: UInt8.self), count: byteCount)
        defer { release(upTo: byteCount) }
        do {
            return try JSONReader.read(bytes: bytes) { try $0.readChangeSetBatch() }.changeSets
        } catch let error as JSONReadError {
            throw SyncError(.malformedChangeSet, "the change-set batch is malformed: \(error)")
        }
    }

    /// Calls `body` with the operations of the batch's only change set, ``operationsPerSlice`` at a time.
    ///
    /// - Throws: ``SyncError`` `.malformedChangeSet` for a malformed operation, naming its index
    ///   and byte offset.
    package func forEachSlice(_ body: ([Operation]) throws -> Void) throws {
        precondition(headers.count == 1, "a change-set batch read in slices holds one change set")
        let range = operations[0]
        // The reader ends where the operations array does, so that each slice's reader may stop there.
        let bytes = UnsafeBufferPointer(start: mapping.assumingMemoryBound(to: UInt8.self), count: range.upperBound)
        var position = range.lowerBound
        var index = 0
        var opened = false, finished = false
        while !finished {
            var slice: [Operation] = []
            slice.reserveCapacity(min(operationsPerSlice, 1 << 16))
            do {
                try JSONReader.read(bytes: bytes) { reader in
                    reader.offset = position
                    if !opened {
                        try reader.beginArray()
                        opened = true
                    }
                    try JSONReadError.at(.key("changeSets")) {
                        try JSONReadError.at(.index(0)) {
                            try JSONReadError.at(.key("operations")) {
                                while slice.count < operationsPerSlice {
                                    guard try reader.nextElement() else {
                                        finished = true
                                        break
                                    }
                                    slice.append(try JSONReadError.at(.index(index)) { try reader.readOperation() })
                                    index += 1
                                }
                            }
                        }
                    }
                    position = reader.offset
                    // The next slice reads on from `position`; the document's end is not checked here.
                    reader.offset = bytes.count
                }
            } catch let error as JSONReadError {
                throw SyncError(.malformedChangeSet, "the change-set batch is malformed: \(error)")
            }
            release(upTo: position)
            if !slice.isEmpty { try body(slice) }
        }
    }

    /// Hands the pages before `offset` back to the system: they are read from the file again if
    /// touched again, so a mapping read through holds no more memory than the slice in hand.
    private func release(upTo offset: Int) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let length = offset / page * page
        guard length > 0 else { return }
        _ = madvise(mapping, length, Int32(MADV_DONTNEED))
    }
}
