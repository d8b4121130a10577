import Foundation

/// A mistake on the command line: printed with a pointer to `--help`, exit status 2.
struct UsageError: Error {
    var message: String
    /// The command whose help to point at; `nil` for the tool's.
    var command: String?
}

/// A failure while running a well-formed command (nothing to find, the store or the server
/// refused): printed as is, exit status 1.
struct ToolError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// One command's arguments: positionals, `--name VALUE` (or `--name=VALUE`) options and
/// `--flag`s, checked against what the command accepts. `--` ends the options.
struct Arguments {
    let command: String
    private(set) var positionals: [String] = []
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    init(_ arguments: [String], command: String, options: Set<String> = [], flags allowedFlags: Set<String> = []) throws {
        self.command = command
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" || Int(argument) != nil {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            if options.contains(name) {
                if let inlineValue {
                    values[name] = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError(message: "\(name) needs a value", command: command) }
                    values[name] = arguments[index]
                    index += 1
                }
            } else if allowedFlags.contains(name), inlineValue == nil {
                flags.insert(name)
            } else {
                throw UsageError(message: "unknown option '\(argument)' for '\(command)'", command: command)
            }
        }
    }

    subscript(option: String) -> String? { values[option] }

    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// Fails unless there are between `minimum` and `maximum` positionals.
    func expectPositionals(_ minimum: Int, _ maximum: Int = .max, what: String) throws {
        if positionals.count < minimum {
            throw UsageError(message: "'\(command)' needs \(what)", command: command)
        }
        if positionals.count > maximum {
            throw UsageError(message: "unexpected argument '\(positionals[maximum])' for '\(command)'", command: command)
        }
    }
}
