// `import SyncKit` is all an app needs: the object store with its macros, and the sync engine.
@_exported import LocalStore
@_exported import SyncEngine
