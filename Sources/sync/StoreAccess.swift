import Foundation
import LocalStoreCore
import SyncEngine

/// Opens an existing store with the schema recorded in it (no Swift types needed).
func openStore(_ path: String) throws -> ObjectStore {
    try ObjectStore(existingAt: path)
}
