/// The command a command line selected, with its options and positional arguments.
public struct ParsedCommand: Sendable, Equatable {
    /// The selected command's path, program first: `["syncd", "token", "add"]`.
    public let path: [String]
    /// The positional arguments, in order.
    public let positionals: [String]
    /// Values of the options that take one, by name without dashes.
    let values: [String: String]
    /// Flags that were given, by name without dashes.
    let flags: Set<String>

    /// Creates a parsed command (``ArgumentParser`` makes these; tests of commands may too).
    public init(path: [String], positionals: [String] = [], values: [String: String] = [:], flags: Set<String> = []) {
        self.path = path
        self.positionals = positionals
        self.values = values
        self.flags = flags
    }

    /// The selected command's name (the last word of ``path``).
    public var name: String { path.last ?? "" }

    /// The value given for the option `name`, if it was given.
    public func value(_ name: String) -> String? { values[name] }

    /// Whether the flag `name` was given.
    public func isSet(_ name: String) -> Bool { flags.contains(name) }

    /// The value of an option the command cannot do without.
    ///
    /// - Throws: ``UsageError`` naming the option when it is missing or empty.
    public func requiredValue(_ name: String) throws(UsageError) -> String {
        guard let value = values[name] else { throw usageError("missing required option --\(name)") }
        guard !value.isEmpty else { throw usageError("option --\(name) must not be empty") }
        return value
    }

    /// A usage error about this command, for checks only the command can make (a value's
    /// format, options that exclude each other).
    public func usageError(_ message: String) -> UsageError {
        UsageError(message, commandPath: path)
    }
}
