import Foundation

// Stop-gap until the lead's key/value settings land on main: the client keeps its cursor and
// configuration in `_sync_state` under a `setting:` prefix. Replace with the main API on merge.
extension SyncReplica {
    /// The value stored for `key`, if any.
    public func setting(_ key: String) throws -> String? {
        try withConnection { connection in
            if case .text(let value)? = try connection.rows("SELECT value FROM _sync_state WHERE key = ?", [.text("setting:" + key)]).first?.first {
                return value
            }
            return nil
        }
    }

    /// Stores `value` for `key` (removes it for `nil`).
    public func setSetting(_ key: String, _ value: String?) throws {
        try withConnection { connection in
            if let value {
                try connection.run("INSERT OR REPLACE INTO _sync_state (key, value) VALUES (?, ?)", [.text("setting:" + key), .text(value)])
            } else {
                try connection.run("DELETE FROM _sync_state WHERE key = ?", [.text("setting:" + key)])
            }
        }
    }
}
