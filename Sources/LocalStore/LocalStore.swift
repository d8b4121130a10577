// `import LocalStore` is what an app declaring entities needs: the store and the macros that
// generate its entity code. The macro expansions name runtime types as `LocalStore.X`, which
// resolves through this re-export.
@_exported import LocalStoreCore
