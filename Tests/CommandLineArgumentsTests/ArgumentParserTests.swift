import CommandLineArguments
import Testing

/// A program shaped like `sync` and `syncd`: a global option, leaf commands with flags, values
/// and positionals, and a command with subcommands of its own.
private let program = CommandDescription(
    name: "tool", summary: "a tool", discussion: "Does things.",
    options: [.value("store", valueName: "PATH", "the store file")],
    subcommands: [
        CommandDescription(
            name: "put", summary: "put an object",
            options: [.flag("json", "print JSON"), .value("limit", valueName: "N", "at most N")],
            positionals: [PositionalDescription("Entity"), PositionalDescription("id", .optional)]),
        CommandDescription(
            name: "set", summary: "set fields",
            positionals: [PositionalDescription("Entity"), PositionalDescription("field=value", .repeated)]),
        CommandDescription(
            name: "token", summary: "manage tokens",
            options: [.value("data", valueName: "DIR", "the data directory")],
            subcommands: [
                CommandDescription(name: "add", summary: "add a token",
                                   options: [.value("dataset", valueName: "NAME", "the dataset", required: true)]),
                CommandDescription(name: "list", summary: "list tokens"),
            ]),
        CommandDescription(name: "_internal", summary: "for the tool itself", isHidden: true),
    ],
    epilogue: "exit status: 0 success, 2 usage error")

private func parse(_ arguments: String...) throws(UsageError) -> ArgumentParser.Result {
    try ArgumentParser(program).parse(arguments)
}

private func run(_ arguments: String...) throws -> ParsedCommand {
    guard case .run(let command) = try ArgumentParser(program).parse(arguments) else {
        Issue.record("\(arguments) asked for help")
        return ParsedCommand(path: [])
    }
    return command
}

/// The usage error `arguments` cause, or `nil` if they parse.
private func usageError(_ arguments: String...) -> UsageError? {
    do {
        _ = try ArgumentParser(program).parse(arguments)
        return nil
    } catch {
        return error
    }
}

@Suite struct ArgumentParserTests {
    @Test func selectsTheCommandWithItsOptionsAndPositionals() throws {
        let command = try run("put", "Note", "--json", "--limit", "5", "42")
        #expect(command.path == ["tool", "put"])
        #expect(command.name == "put")
        #expect(command.positionals == ["Note", "42"])
        #expect(command.isSet("json"))
        #expect(command.value("limit") == "5")
        #expect(command.value("store") == nil)
    }

    @Test func valuesMayBeJoinedWithAnEqualsSignOrStartWithADash() throws {
        #expect(try run("put", "Note", "--limit=-1").value("limit") == "-1")
        #expect(try run("put", "Note", "--limit", "-1").value("limit") == "-1")
        #expect(try run("put", "Note", "--limit=a=b").value("limit") == "a=b")
        #expect(try run("put", "Note", "--limit=").value("limit") == "")
    }

    @Test func globalOptionsAreAcceptedBeforeAndAfterTheCommand() throws {
        #expect(try run("--store", "a.sqlite", "put", "Note").value("store") == "a.sqlite")
        #expect(try run("put", "Note", "--store=b.sqlite").value("store") == "b.sqlite")
        #expect(try run("token", "--data", "dir", "add", "--dataset", "d").value("data") == "dir")
        #expect(try run("token", "add", "--dataset", "d", "--data", "dir").path == ["tool", "token", "add"])
    }

    @Test func doubleDashEndsTheOptions() throws {
        let command = try run("put", "--", "--json", "-h")
        #expect(command.positionals == ["--json", "-h"])
        #expect(!command.isSet("json"))
        #expect(try run("put", "-").positionals == ["-"])
    }

    @Test func repeatedPositionalsTakeAnyNumber() throws {
        #expect(try run("set", "Note").positionals == ["Note"])
        #expect(try run("set", "Note", "a=1", "b=2", "c=3").positionals == ["Note", "a=1", "b=2", "c=3"])
    }

    @Test func usageErrorsNameTheOptionOrArgument() {
        #expect(usageError("put", "Note", "--verbose")?.message == "unknown option '--verbose'")
        #expect(usageError("put", "Note", "-v")?.message == "unknown option '-v'")
        #expect(usageError("put", "Note", "--limit")?.message == "option '--limit' needs a value")
        #expect(usageError("put", "Note", "--json=yes")?.message == "option '--json' takes no value")
        #expect(usageError("put", "Note", "--limit", "1", "--limit=2")?.message == "option '--limit' is given twice")
        #expect(usageError("put")?.message == "missing <Entity>")
        #expect(usageError("put", "Note", "1", "extra")?.message == "unexpected argument 'extra'")
        #expect(usageError("put", "Note", "1", "x", "y")?.message == "unexpected arguments 'x' 'y'")
        #expect(usageError("frobnicate")?.message == "unknown command 'frobnicate'; commands: put, set, token")
        #expect(usageError()?.message == "missing command; commands: put, set, token")
        #expect(usageError("token")?.message == "missing command; commands: add, list")
        #expect(usageError("token", "add")?.message == "missing required option --dataset")
        #expect(usageError("token", "add", "--dataset=")?.message == "option --dataset must not be empty")
        #expect(usageError("--store")?.message == "option '--store' needs a value")
        #expect(usageError("token", "add", "--json")?.message == "unknown option '--json'", "options of a sibling command are not accepted")
    }

    @Test func usageErrorsPointAtTheCommandsHelp() {
        let error = usageError("token", "add")
        #expect(error?.commandPath == ["tool", "token", "add"])
        #expect(error?.description == "tool token add: missing required option --dataset\nRun 'tool token add --help' for usage.")
        #expect(usageError("--bogus")?.description == "tool: unknown option '--bogus'\nRun 'tool --help' for usage.")
        #expect(UsageError.exitStatus == 2)
    }

    @Test func helpIsForTheCommandSelectedSoFar() throws {
        let top = ArgumentParser(program).help()
        #expect(try parse("--help") == .help(top))
        #expect(try parse("-h") == .help(top))
        #expect(try parse("help") == .help(top))
        #expect(try parse("help", "nonsense") == .help(top))
        let put = ArgumentParser(program).help(for: ["put"])
        #expect(put != top)
        #expect(try parse("put", "--help") == .help(put))
        #expect(try parse("put", "-h", "--json") == .help(put), "help wins over missing positionals")
        #expect(try parse("help", "put") == .help(put))
        #expect(try parse("token", "add", "--help") == .help(ArgumentParser(program).help(for: ["tool", "token", "add"])))
        #expect(try parse("help", "token", "add") == .help(ArgumentParser(program).help(for: ["token", "add"])))
    }

    @Test func helpIsGeneratedFromTheDeclarations() {
        let top = ArgumentParser(program).help()
        #expect(top == """
            usage: tool [--store PATH] <command> [arguments]

            Does things.

            commands:
              put    put an object
              set    set fields
              token  manage tokens

            options:
              --store PATH  the store file
              -h, --help    show this help

            exit status: 0 success, 2 usage error
            """)
        #expect(!top.contains("_internal"), "hidden commands are not listed")
        let put = ArgumentParser(program).help(for: ["put"])
        #expect(put.hasPrefix("usage: tool put [--json] [--limit N] <Entity> [<id>]\n"))
        #expect(put.contains("\n  --limit N     at most N\n"))
        #expect(put.contains("\n  --store PATH  the store file\n"), "inherited options are listed")
        #expect(ArgumentParser(program).help(for: ["token", "add"]).hasPrefix("usage: tool token add --dataset NAME\n"))
        #expect(ArgumentParser(program).help(for: ["set"]).hasPrefix("usage: tool set <Entity> [<field=value>...]\n"))
    }

    @Test func explicitSynopsesReplaceTheGeneratedOne() {
        let described = CommandDescription(name: "init", summary: "", synopses: ["--schema FILE", "--snapshot"])
        let help = ArgumentParser(described).help()
        #expect(help.hasPrefix("usage: init --schema FILE\n       init --snapshot\n"))
    }

    @Test func hiddenCommandsStillRun() throws {
        #expect(try run("_internal").path == ["tool", "_internal"])
    }

    @Test func requiredValueNamesTheOption() throws {
        let command = try run("put", "Note", "--limit=")
        #expect(throws: UsageError("option --limit must not be empty", commandPath: ["tool", "put"])) { try command.requiredValue("limit") }
        #expect(throws: UsageError("missing required option --store", commandPath: ["tool", "put"])) { try command.requiredValue("store") }
        #expect(command.usageError("bad").description == "tool put: bad\nRun 'tool put --help' for usage.")
    }
}
