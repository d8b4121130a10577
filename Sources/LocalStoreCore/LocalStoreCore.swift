// The store's public API speaks in SQLite values and store errors; re-exporting them means
// `import LocalStore` (or `import SyncKit`) is enough to name them.
@_exported import SQLiteDatabase
