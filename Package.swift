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
        .macro(
            name: "LocalStoreMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]
        ),
        .target(name: "LocalStore", dependencies: ["CSQLite", "LocalStoreMacros"]),
        // The one command-line parser of syncd, sync and bench: Foundation-free, so any tool can use it.
        .target(name: "CommandLineArguments"),
        .target(name: "SyncKit", dependencies: ["LocalStore"]),
        // Glibc's Swift module does not export <sys/epoll.h>; this header-only shim exposes it
        // (and nothing on other platforms, where the server falls back to poll(2)).
        .systemLibrary(name: "CEpoll"),
        .target(name: "SyncServer", dependencies: ["SyncKit", "CEpoll"]),
        .executableTarget(name: "syncd", dependencies: ["SyncServer", "CommandLineArguments"]),
        .executableTarget(name: "sync", dependencies: ["SyncKit", "CommandLineArguments"]),
        .executableTarget(name: "bench", dependencies: ["SyncKit", "CSQLite", "CommandLineArguments"]),
        // Test support, not shipped: a child process that CrashSafetyTests kills mid-save and mid-merge.
        .executableTarget(name: "SyncCrashHelper", dependencies: ["SyncKit"]),
        .testTarget(name: "LocalStoreTests", dependencies: ["LocalStore"]),
        .testTarget(name: "CommandLineArgumentsTests", dependencies: ["CommandLineArguments"]),
        .testTarget(
            name: "LocalStoreMacrosTests",
            dependencies: [
                "LocalStoreMacros",
                .product(name: "SwiftSyntaxMacrosTestSupport", package: "swift-syntax"),
            ]
        ),
        .testTarget(name: "SyncKitTests", dependencies: ["SyncKit"]),
        // Runs the built syncd and sync executables; build them first (`swift build --build-tests` does).
        .testTarget(name: "EndToEndTests", dependencies: ["SyncKit"]),
        .testTarget(name: "SyncServerTests", dependencies: ["SyncServer", "SyncKit"]),
        // The HTTP client against an in-process stub server, and the `sync` CLI run as a process
        // (the dependency on `sync` makes sure the binary is built before the tests run).
        .testTarget(name: "SyncClientTests", dependencies: ["SyncKit", "SyncServer", "sync"]),
    ],
    swiftLanguageModes: [.v6]
)
