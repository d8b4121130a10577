// swift-tools-version: 6.2
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "ObjectSync",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "LocalStore", targets: ["LocalStore"]),
        .library(name: "SyncKit", targets: ["SyncKit"]),
        .library(name: "SyncServer", targets: ["SyncServer"]),
        .executable(name: "syncd", targets: ["syncd"]),
        .executable(name: "sync", targets: ["sync"]),
        .executable(name: "bench", targets: ["bench"]),
    ],
    dependencies: [
        // The only dependency the product allows: used by the macro plugin and macro tests.
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.0"..<"700.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // Glibc's Swift module does not export <sys/epoll.h>; this header-only shim exposes it
        // (and nothing on other platforms, where the server falls back to poll(2)).
        .systemLibrary(name: "CEpoll"),
        // libpq, the PostgreSQL client library: only syncd's storage links it, never a client.
        .systemLibrary(
            name: "CPostgreSQL",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),

        // libcurl, for requests to an https server that trusts a private certificate authority
        // (FoundationNetworking on Linux offers no way to name one).
        .systemLibrary(
            name: "CLibcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),

        // The object store. Everything below the macros builds without swift-syntax, so the
        // engine, the server and the CLI never wait for it.
        .target(name: "SQLiteDatabase", dependencies: ["CSQLite", "Codecs"]),
        .target(name: "Codecs"),
        .target(name: "LocalStoreCore", dependencies: ["SQLiteDatabase", "Codecs"]),
        .macro(
            name: "LocalStoreMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]
        ),
        // What an app imports to declare entities: LocalStoreCore plus the macros.
        .target(name: "LocalStore", dependencies: ["LocalStoreCore", "LocalStoreMacros"]),

        // Sync: the engine works on the stored schema only; SyncKit adds the macros for apps.
        .target(name: "SyncEngine", dependencies: ["LocalStoreCore", "Codecs", "CLibcurl"]),
        .target(name: "SyncKit", dependencies: ["LocalStore", "SyncEngine"]),

        // The server: a sync-agnostic HTTP/1.1 server, and the sync routes on top of it.
        .target(name: "HTTPServer", dependencies: ["CEpoll", "Codecs"]),
        // A small PostgreSQL client on libpq: connections, parameterized queries, transactions.
        .target(name: "PostgreSQLClient", dependencies: ["CPostgreSQL"]),
        .target(name: "SyncServer", dependencies: ["HTTPServer", "SyncEngine", "LocalStoreCore", "SQLiteDatabase", "Codecs", "PostgreSQLClient"]),

        // The one command-line parser of syncd, sync and bench: Foundation-free, so any tool can use it.
        .target(name: "CommandLineArguments"),
        .executableTarget(name: "syncd", dependencies: ["SyncServer", "SyncEngine", "Codecs", "CommandLineArguments", "PostgreSQLClient"]),
        .executableTarget(name: "sync", dependencies: ["SyncEngine", "LocalStoreCore", "Codecs", "CommandLineArguments"]),
        .executableTarget(name: "bench", dependencies: ["SyncKit", "SQLiteDatabase", "Codecs", "CSQLite", "CommandLineArguments"]),
        // Test support, not shipped: a child process that CrashSafetyTests kills mid-save and mid-merge.
        .executableTarget(name: "SyncCrashHelper", dependencies: ["SyncKit"]),

        // Shared by the test targets, not shipped: a seeded random number generator, the launcher
        // of the built executables (syncd, sync, SyncCrashHelper), temporary files and directories,
        // store digests.
        .target(name: "TestSupport", dependencies: ["SQLiteDatabase"], path: "Tests/TestSupport"),
        .testTarget(name: "LocalStoreTests", dependencies: ["LocalStore", "LocalStoreCore", "Codecs", "TestSupport"]),
        .testTarget(name: "CommandLineArgumentsTests", dependencies: ["CommandLineArguments"]),
        .testTarget(
            name: "LocalStoreMacrosTests",
            dependencies: [
                "LocalStoreMacros",
                .product(name: "SwiftSyntaxMacrosTestSupport", package: "swift-syntax"),
            ]
        ),
        .testTarget(name: "SyncKitTests", dependencies: ["SyncKit", "SyncEngine", "LocalStoreCore", "Codecs", "TestSupport"]),
        // Runs the built syncd and sync executables; build them first (`swift build --build-tests` does).
        .testTarget(name: "EndToEndTests", dependencies: ["SyncKit", "SyncEngine", "LocalStoreCore", "Codecs", "TestSupport", "CommandLineArguments"]),
        .testTarget(name: "SyncServerTests", dependencies: ["SyncServer", "HTTPServer", "SyncKit", "SyncEngine", "Codecs", "TestSupport", "PostgreSQLClient"]),
        // The HTTP client against an in-process stub server, and the `sync` CLI run as a process
        // (the dependency on `sync` makes sure the binary is built before the tests run).
        .testTarget(name: "SyncClientTests", dependencies: ["SyncKit", "SyncEngine", "SyncServer", "HTTPServer", "TestSupport", "sync"]),
    ],
    swiftLanguageModes: [.v6]
)
