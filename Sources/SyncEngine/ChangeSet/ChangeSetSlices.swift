import Foundation

/// A change set read a slice of operations at a time, so that it need not be whole in memory:
/// a large change set decoded from the parts it travelled in.
///
/// ``SyncReplica/apply(slices:)`` reads the operations twice: once to validate them and learn
/// what must be known before merging (their count and deletes), once to merge them. Every
/// reading must give the same operations in the same order.
public protocol ChangeSetSlices {
    /// The change set's dot, HLC, vector and authenticator; its operations are ignored.
    var header: ChangeSet { get }
    /// Calls `body` with the operations in order, a slice at a time.
    func forEachSlice(_ body: ([Operation]) throws -> Void) throws
}

/// A change set held whole in memory, given in slices of a fixed number of operations.
public struct ChangeSetInSlices: ChangeSetSlices {
    /// The change set.
    public let changeSet: ChangeSet
    /// Operations per slice (the last one may hold fewer).
    public let operationsPerSlice: Int

    /// `changeSet` in slices of `operationsPerSlice` operations (at least 1).
    public init(_ changeSet: ChangeSet, operationsPerSlice: Int) {
        self.changeSet = changeSet
        self.operationsPerSlice = max(1, operationsPerSlice)
    }

    /// The change set without its operations.
    public var header: ChangeSet {
        var header = changeSet
        header.operations = []
        return header
    }

    /// Calls `body` with consecutive runs of `operationsPerSlice` operations.
    public func forEachSlice(_ body: ([Operation]) throws -> Void) throws {
        let operations = changeSet.operations
        for start in stride(from: 0, to: operations.count, by: operationsPerSlice) {
            try body(Array(operations[start..<min(start + operationsPerSlice, operations.count)]))
        }
    }
}
