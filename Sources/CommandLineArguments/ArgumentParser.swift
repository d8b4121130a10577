/// Parses a command line against a program's ``CommandDescription``.
///
/// The rules, the same for every program:
/// - `--name value` and `--name=value` give an option its value (the value may start with `-`);
///   `--name` alone sets a flag, and `--flag=value` is an error.
/// - `-h` and `--help` anywhere ask for the help of the command selected so far, and `help
///   [command...]` as a subcommand asks for a command's help.
/// - `--` ends the options: every argument after it is positional. A lone `-` is positional.
/// - The first non-option argument of a command with subcommands selects one; options of a
///   command are accepted after its subcommands too.
/// - Unknown options and commands, missing or repeated values, and too few or too many
///   positional arguments are ``UsageError``s that name the option or argument.
public struct ArgumentParser: Sendable {
    /// What a command line asks for.
    public enum Result: Sendable, Equatable {
        /// Print this help text on stdout and exit with status 0.
        case help(String)
        /// Run this command.
        case run(ParsedCommand)
    }

    /// The program, as its root command.
    public let program: CommandDescription

    /// A parser for `program`.
    public init(_ program: CommandDescription) {
        self.program = program
    }

    /// Parses `arguments` (without the program's own name).
    public func parse(_ arguments: [String]) throws(UsageError) -> Result {
        var command = program
        var path = [program.name]
        var accepted: [String: OptionDescription] = [:]
        for option in program.options { accepted[option.name] = option }
        var values: [String: String] = [:]
        var flags: Set<String> = []
        var positionals: [String] = []
        var wantsHelp = false
        var optionsEnded = false
        var index = arguments.startIndex

        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if !optionsEnded && argument == "--" {
                optionsEnded = true
                continue
            }
            if !optionsEnded && argument.hasPrefix("-") && argument != "-" {
                if argument == "-h" || argument == "--help" {
                    wantsHelp = true
                    continue
                }
                guard argument.hasPrefix("--") else { throw UsageError("unknown option '\(argument)'", commandPath: path) }
                var name = String(argument.dropFirst(2))
                var inlineValue: String?
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                guard let option = accepted[name] else { throw UsageError("unknown option '--\(name)'", commandPath: path) }
                if option.takesValue {
                    guard values[name] == nil else { throw UsageError("option '--\(name)' is given twice", commandPath: path) }
                    if let inlineValue {
                        values[name] = inlineValue
                    } else {
                        guard index < arguments.endIndex else { throw UsageError("option '--\(name)' needs a value", commandPath: path) }
                        values[name] = arguments[index]
                        index += 1
                    }
                } else {
                    guard inlineValue == nil else { throw UsageError("option '--\(name)' takes no value", commandPath: path) }
                    flags.insert(name)
                }
                continue
            }
            guard !command.subcommands.isEmpty else {
                positionals.append(argument)
                continue
            }
            if argument == "help" {
                // `help [command...]`: the deepest command the words name; an unknown word stops there.
                var topic = command
                var topicPath = path
                for word in arguments[index...] {
                    guard let next = topic.subcommands.first(where: { $0.name == word }) else { break }
                    topic = next
                    topicPath.append(word)
                }
                return .help(ArgumentParser.help(for: topic, path: topicPath, inherited: inheritedOptions(along: topicPath)))
            }
            guard let subcommand = command.subcommands.first(where: { $0.name == argument }) else {
                throw UsageError("unknown command '\(argument)'; commands: \(ArgumentParser.commandNames(command))", commandPath: path)
            }
            command = subcommand
            path.append(subcommand.name)
            for option in subcommand.options { accepted[option.name] = option }
        }

        if wantsHelp {
            return .help(ArgumentParser.help(for: command, path: path, inherited: inheritedOptions(along: path)))
        }
        if !command.subcommands.isEmpty {
            throw UsageError("missing command; commands: \(ArgumentParser.commandNames(command))", commandPath: path)
        }
        try ArgumentParser.checkPositionals(positionals, of: command, path: path)
        let parsed = ParsedCommand(path: path, positionals: positionals, values: values, flags: flags)
        for option in command.options + inheritedOptions(along: path) where option.isRequired {
            _ = try parsed.requiredValue(option.name)
        }
        return .run(parsed)
    }

    /// The help text of the command at `path` (program first); the program's help if no
    /// command has that path.
    public func help(for path: [String] = []) -> String {
        var command = program
        var resolved = [program.name]
        for word in path.drop(while: { $0 == program.name }) {
            guard let next = command.subcommands.first(where: { $0.name == word }) else { break }
            command = next
            resolved.append(word)
        }
        return ArgumentParser.help(for: command, path: resolved, inherited: inheritedOptions(along: resolved))
    }

    /// The options the ancestors of the command at `path` declare, which it accepts too.
    private func inheritedOptions(along path: [String]) -> [OptionDescription] {
        var command = program
        var options: [OptionDescription] = []
        for word in path.dropFirst() {
            options += command.options
            guard let next = command.subcommands.first(where: { $0.name == word }) else { break }
            command = next
        }
        // A command's own declaration of a name replaces an ancestor's.
        return options.filter { option in !command.options.contains { $0.name == option.name } }
    }

    private static func commandNames(_ command: CommandDescription) -> String {
        command.subcommands.filter { !$0.isHidden }.map(\.name).joined(separator: ", ")
    }

    /// Checks the number of positional arguments against the command's declaration.
    private static func checkPositionals(_ positionals: [String], of command: CommandDescription, path: [String]) throws(UsageError) {
        let declared = command.positionals
        let required = declared.filter { $0.arity == .required }
        if positionals.count < required.count {
            let missing = required[positionals.count...].map { "<\($0.name)>" }.joined(separator: " ")
            throw UsageError("missing \(missing)", commandPath: path)
        }
        guard !declared.contains(where: { $0.arity == .repeated }) else { return }
        if positionals.count > declared.count {
            let extra = positionals[declared.count...]
            let list = extra.map { "'\($0)'" }.joined(separator: " ")
            throw UsageError("unexpected argument\(extra.count > 1 ? "s" : "") \(list)", commandPath: path)
        }
    }
}
