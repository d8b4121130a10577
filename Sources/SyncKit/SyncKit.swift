@_exported import LocalStore
