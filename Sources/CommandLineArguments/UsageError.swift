/// A mistake in how a program was invoked. Programs print ``description`` on stderr and exit
/// with ``exitStatus`` (2), keeping 1 for failures while doing what was asked.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, naming the option or argument: `unknown option '--verbose'`.
    public var message: String
    /// The command the mistake was made in, program first (`["sync", "status"]`), so the
    /// message can point at that command's help.
    public var commandPath: [String]

    /// The exit status for a usage error.
    public static let exitStatus: Int32 = 2

    /// Creates an error about the command at `commandPath`.
    public init(_ message: String, commandPath: [String]) {
        self.message = message
        self.commandPath = commandPath
    }

    /// The message, prefixed with the command, and a pointer to the command's help:
    ///
    ///     sync status: unknown option '--verbose'
    ///     Run 'sync status --help' for usage.
    public var description: String {
        let command = commandPath.joined(separator: " ")
        return "\(command): \(message)\nRun '\(command) --help' for usage."
    }
}
