// `import SyncKit` is all a client needs: it brings LocalStore along.
@_exported import LocalStore
