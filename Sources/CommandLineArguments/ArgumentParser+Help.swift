extension ArgumentParser {
    /// The help of `command` at `path`: usage lines, discussion, subcommands, options (its own,
    /// then those it inherits), epilogue. Everything but the prose comes from the declarations,
    /// so the help cannot disagree with what the parser accepts.
    static func help(for command: CommandDescription, path: [String], inherited: [OptionDescription]) -> String {
        let prefix = path.joined(separator: " ")
        let synopses = command.synopses.isEmpty ? [generatedSynopsis(command)] : command.synopses
        var sections: [String] = []
        sections.append(synopses.enumerated().map { index, synopsis in
            (index == 0 ? "usage: " : "       ") + ([prefix, synopsis].filter { !$0.isEmpty }.joined(separator: " "))
        }.joined(separator: "\n"))
        if !command.discussion.isEmpty { sections.append(command.discussion) }
        let visible = command.subcommands.filter { !$0.isHidden }
        if !visible.isEmpty {
            sections.append("commands:\n" + table(visible.map { ($0.name, $0.summary) }))
        }
        let options = (command.options + inherited).map { ($0.usage, $0.summary) } + [("-h, --help", "show this help")]
        sections.append("options:\n" + table(options))
        if !command.epilogue.isEmpty { sections.append(command.epilogue) }
        return sections.joined(separator: "\n\n")
    }

    /// `[--json] [--limit N] --schema FILE <Entity> [<id>]`, or `[options] <command> [arguments]`
    /// for a command with subcommands.
    private static func generatedSynopsis(_ command: CommandDescription) -> String {
        var words = command.options.map { $0.isRequired ? $0.usage : "[\($0.usage)]" }
        if command.subcommands.isEmpty {
            words += command.positionals.map(\.usage)
        } else {
            words.append("<command> [arguments]")
        }
        return words.joined(separator: " ")
    }

    /// Two columns, the second aligned two spaces after the longest first one.
    private static func table(_ rows: [(String, String)]) -> String {
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { left, right in
            "  " + left + String(repeating: " ", count: width - left.count + 2) + right
        }.joined(separator: "\n")
    }
}
