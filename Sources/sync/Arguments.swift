import Foundation

/// A mistake in how `sync` was invoked: printed with a pointer to `--help`, exit status 2.
struct UsageError: Error {
    var message: String
    /// The subcommand being parsed, to point at its help.
    var command: String?
}

/// A failure while doing what was asked: printed, exit status 1.
struct RuntimeError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// A subcommand's arguments after option parsing.
struct Arguments {
    /// The subcommand name (e.g. `put`).
    var command: String
    /// Non-option arguments, in order.
    var positionals: [String] = []
    /// Options that take a value, by name without dashes (`store`, `schema`, ...).
    var options: [String: String] = [:]
    /// Options without a value that were given (`clear`, `json`, `help`).
    var flags: Set<String> = []

    /// Splits `arguments` into positionals, `--name value` / `--name=value` options and
    /// `--flag`s. `--` ends option parsing; `-h` means `--help`. Unknown options are usage errors.
    init(command: String, _ arguments: [String], options known: Set<String>, flags knownFlags: Set<String>) throws(UsageError) {
        self.command = command
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument == "-h" || argument == "--help" {
                flags.insert("help")
                continue
            }
            guard argument.hasPrefix("--") else {
                throw UsageError(message: "unknown option '\(argument)'", command: command)
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if known.contains(name) {
                if let inlineValue {
                    options[name] = inlineValue
                } else {
                    guard index < arguments.count else {
                        throw UsageError(message: "option '--\(name)' needs a value", command: command)
                    }
                    options[name] = arguments[index]
                    index += 1
                }
            } else if knownFlags.contains(name) {
                guard inlineValue == nil else { throw UsageError(message: "option '--\(name)' takes no value", command: command) }
                flags.insert(name)
            } else {
                throw UsageError(message: "unknown option '--\(name)'", command: command)
            }
        }
    }

    var wantsHelp: Bool { flags.contains("help") }

    /// Requires exactly the named positionals (plus `optional` ones at most), returning them.
    func positionals(_ names: [String], optional: Int = 0) throws(UsageError) -> [String] {
        if positionals.count < names.count {
            let missing = names[positionals.count...].map { "<\($0)>" }.joined(separator: " ")
            throw UsageError(message: "missing \(missing)", command: command)
        }
        if positionals.count > names.count + optional {
            let extra = positionals[(names.count + optional)...].map { "'\($0)'" }.joined(separator: " ")
            throw UsageError(message: "unexpected argument\(positionals.count - names.count - optional > 1 ? "s" : "") \(extra)", command: command)
        }
        return positionals
    }

    /// The value of a required option.
    func required(_ option: String) throws(UsageError) -> String {
        guard let value = options[option] else { throw UsageError(message: "missing required option --\(option)", command: command) }
        guard !value.isEmpty else { throw UsageError(message: "option --\(option) must not be empty", command: command) }
        return value
    }

    /// Parses `text` as an object ID (a UUID).
    func objectID(_ text: String, what: String = "id") throws(UsageError) -> UUID {
        guard let id = UUID(uuidString: text) else {
            throw UsageError(message: "\(what) '\(text)' is not a UUID (like 6BA7B810-9DAD-11D1-80B4-00C04FD430C8)", command: command)
        }
        return id
    }
}
