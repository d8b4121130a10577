import CommandLineArguments
import Foundation

/// A failure while doing what was asked: printed, exit status 1.
struct RuntimeError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// A `sync` subcommand: what it accepts (from which the parser and its help come) and what it does.
struct Command: Sendable {
    var description: CommandDescription
    /// Runs the command with the parsed arguments and the store path.
    var run: @Sendable (ParsedCommand, String) async throws -> Void

    init(_ description: CommandDescription, run: @escaping @Sendable (ParsedCommand, String) async throws -> Void) {
        self.description = description
        self.run = run
    }
}

extension ParsedCommand {
    /// Parses `text` as an object ID (a UUID).
    func objectID(_ text: String, what: String = "id") throws(UsageError) -> UUID {
        guard let id = UUID(uuidString: text) else {
            throw usageError("\(what) '\(text)' is not a UUID (like 6BA7B810-9DAD-11D1-80B4-00C04FD430C8)")
        }
        return id
    }
}
