/// A command a program accepts: its options, positional arguments or subcommands, and the
/// text its `--help` shows.
///
/// The program itself is the root command; a command with ``subcommands`` dispatches to one of
/// them and takes no positional arguments of its own. Options declared on a command are accepted
/// after it and after any of its subcommands (a program's global options, such as `sync --store`).
///
/// ```swift
/// let program = CommandDescription(
///     name: "tool", summary: "does things",
///     options: [.value("data", valueName: "DIR", "the data directory")],
///     subcommands: [
///         CommandDescription(name: "list", summary: "list the things", options: [.flag("json", "print JSON")]),
///     ])
/// switch try ArgumentParser(program).parse(["list", "--json", "--data=/tmp/x"]) {
/// case .help(let text): print(text)
/// case .run(let command): print(command.path, command.isSet("json"), command.value("data") ?? "")
/// }
/// ```
public struct CommandDescription: Sendable {
    /// The word that selects the command (for the root, the program's name).
    public var name: String
    /// One line, shown in the parent's list of commands.
    public var summary: String
    /// Usage lines after the command's path, replacing the one generated from the options and
    /// positionals (for commands whose forms the generated line cannot express).
    public var synopses: [String]
    /// Paragraphs shown after the usage lines.
    public var discussion: String
    /// The options the command accepts, in the order its help lists them.
    public var options: [OptionDescription]
    /// The positional arguments, in order: required ones, then optional ones, then at most one
    /// repeated one.
    public var positionals: [PositionalDescription]
    /// The commands this one dispatches to; empty for a command that runs itself.
    public var subcommands: [CommandDescription]
    /// Text shown at the end of the help (exit statuses, environment variables).
    public var epilogue: String
    /// Whether the parent's help leaves the command out (commands for the program's own use).
    public var isHidden: Bool

    /// Describes a command; see the properties for the parameters.
    public init(
        name: String, summary: String, synopses: [String] = [], discussion: String = "",
        options: [OptionDescription] = [], positionals: [PositionalDescription] = [],
        subcommands: [CommandDescription] = [], epilogue: String = "", isHidden: Bool = false
    ) {
        self.name = name
        self.summary = summary
        self.synopses = synopses
        self.discussion = discussion
        self.options = options
        self.positionals = positionals
        self.subcommands = subcommands
        self.epilogue = epilogue
        self.isHidden = isHidden
    }
}

/// A `--name` option: a flag, or an option that takes a value (`--name value` or `--name=value`).
public struct OptionDescription: Sendable, Equatable {
    /// The name without its leading dashes.
    public var name: String
    /// What the value is called in help (`PATH`, `N`); `nil` for a flag.
    public var valueName: String?
    /// One line for the help.
    public var summary: String
    /// Whether the command cannot run without it (a value option only).
    public var isRequired: Bool

    /// Whether the option takes a value.
    public var takesValue: Bool { valueName != nil }

    /// A flag: given or not, never with a value.
    public static func flag(_ name: String, _ summary: String) -> OptionDescription {
        OptionDescription(name: name, valueName: nil, summary: summary, isRequired: false)
    }

    /// An option that takes a value; `required` ones must be given and not empty.
    public static func value(_ name: String, valueName: String, _ summary: String, required: Bool = false) -> OptionDescription {
        OptionDescription(name: name, valueName: valueName, summary: summary, isRequired: required)
    }

    /// How the option is written in usage lines and help: `--json`, `--limit N`.
    var usage: String { valueName.map { "--\(name) \($0)" } ?? "--\(name)" }
}

/// A positional argument of a command.
public struct PositionalDescription: Sendable, Equatable {
    /// How many times the argument may be given.
    public enum Arity: Sendable, Equatable {
        /// Exactly once.
        case required
        /// At most once.
        case optional
        /// Any number of times, including none (only as the last positional).
        case repeated
    }

    /// The argument's name in usage lines and errors (`Entity`, `id`).
    public var name: String
    /// How many times it may be given.
    public var arity: Arity

    /// Describes a positional argument.
    public init(_ name: String, _ arity: Arity = .required) {
        self.name = name
        self.arity = arity
    }

    /// How the argument is written in usage lines: `<id>`, `[<id>]`, `[<field=value>...]`.
    var usage: String {
        switch arity {
        case .required: return "<\(name)>"
        case .optional: return "[<\(name)>]"
        case .repeated: return "[<\(name)>...]"
        }
    }
}
