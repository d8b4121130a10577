/// The version of a ``VersionedSchema``: major, minor and patch numbers, ordered as semantic
/// versions are.
///
/// ```swift
/// enum NotesV2: VersionedSchema {
///     static let versionIdentifier = SchemaVersionIdentifier(2, 0, 0)
///     static let models: [any PersistentEntity.Type] = [Note.self]
/// }
/// NotesV2.versionIdentifier.description   // "2.0.0"
/// ```
public struct SchemaVersionIdentifier: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The major version number.
    public let major: Int
    /// The minor version number.
    public let minor: Int
    /// The patch version number.
    public let patch: Int

    /// The version `major.minor.patch`.
    ///
    /// ```swift
    /// let version = SchemaVersionIdentifier(1, 2, 0)
    /// ```
    public init(_ major: Int, _ minor: Int, _ patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// Orders by major, then minor, then patch number: `1.10.0` comes after `1.9.3`.
    public static func < (lhs: SchemaVersionIdentifier, rhs: SchemaVersionIdentifier) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    /// The version as `major.minor.patch`, such as `"1.0.0"`.
    public var description: String { "\(major).\(minor).\(patch)" }
}
