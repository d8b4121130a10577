import Foundation
import SyncKit

/// Opens an existing store with the schema recorded in it (no Swift types needed).
func openStore(_ path: String) throws -> ObjectStore {
    throw RuntimeError("opening a store without its Swift types needs ObjectStore(existingAt:), which is not on main yet")
}
