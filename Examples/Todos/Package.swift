// swift-tools-version: 6.2
import PackageDescription

// SwiftPM names a path dependency after its directory, which is whatever the repository was
// cloned as. (A tool depending on it by URL names it after the URL's last component instead.)
let repository = String(#filePath.split(separator: "/").dropLast(3).last ?? "ObjectSync")

// An example of a tool built on SyncKit the way a user's own tool would be: its own package,
// depending on the ObjectSync package (here by path; a real tool would give its URL).
let package = Package(
    name: "Todos",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "todos", targets: ["todos"]),
    ],
    dependencies: [
        .package(path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "todos",
            dependencies: [.product(name: "SyncKit", package: repository)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
