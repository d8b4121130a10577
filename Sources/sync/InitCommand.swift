import CommandLineArguments
import Foundation
import LocalStoreCore
import SyncEngine

let initCommand = Command(CommandDescription(
    name: "init", summary: "create a store from a schema and configure its server",
    synopses: [
        "[<store>] --schema <json-file> --server <url> --dataset <name> [--token-file <path> | --token - | --token <token>] [--ca-file <pem>]",
        "[<store>] --snapshot --server <url> --dataset <name> [--token-file <path> | --token - | --token <token>] [--ca-file <pem>]",
    ],
    discussion: """
        Creates the store file (default: --store, $SYNC_STORE, else ./sync.sqlite) from a schema
        JSON as 'ObjectStore.exportSchema()' or 'GET /v1/datasets/{dataset}/schema' writes it,
        gives it a replica ID, and saves the server URL, dataset and token in it. Does not
        contact the server: 'sync push' registers the schema. Running it on an existing store
        keeps the replica, migrates to the schema if it only adds, and updates the configuration.

        With --snapshot instead of --schema, downloads the dataset's snapshot from the server as
        the new store (fast for a large dataset); the next pull continues after it.

        The token is read from --token-file PATH (its first line), from standard input with
        '--token -', or from the environment variable SYNC_TOKEN. '--token TOKEN' works too, but
        a command line is visible to every user of the machine (ps, /proc), so prefer the others.
        The store file keeps the token; it and its -wal/-shm files get mode 0600 (owner only).

        For an https server whose certificate a private certificate authority signed, --ca-file
        names a PEM file of the authorities to trust instead of the system's; the store
        remembers it (as an absolute path) for every later push and pull.
        """,
    options: [
        .value("schema", valueName: "FILE", "the schema JSON (SchemaDocument)"),
        .value("server", valueName: "URL", "the syncd base URL, e.g. http://127.0.0.1:8080", required: true),
        .value("dataset", valueName: "NAME", "the dataset (1-64 of A-Z a-z 0-9 . _ -, not starting with '.')", required: true),
        .value("token-file", valueName: "PATH", "read the dataset's bearer token ('syncd token add') from the file PATH"),
        .value("token", valueName: "TOKEN", "the bearer token itself ('-' reads it from standard input); default: $SYNC_TOKEN"),
        .flag("snapshot", "start from the server's snapshot instead of a schema file"),
        .value("ca-file", valueName: "PEM", "trust the certificate authorities in this PEM file instead of the system's (https)"),
    ],
    positionals: [PositionalDescription("store", .optional)]
)) { arguments, storePath in
    let path = arguments.positionals.first ?? storePath
    let fromSnapshot = arguments.isSet("snapshot")
    if fromSnapshot && arguments.value("schema") != nil {
        throw arguments.usageError("give either --schema or --snapshot, not both")
    }
    let schemaPath = fromSnapshot ? "" : try arguments.requiredValue("schema")
    let server = try arguments.requiredValue("server")
    let dataset = try arguments.requiredValue("dataset")
    let token = try TokenSource.read(arguments)
    guard let url = URL(string: server), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
        throw arguments.usageError("--server '\(server)' is not an http(s) URL like http://127.0.0.1:8080")
    }
    guard HTTPTransport.isValidDatasetName(dataset) else {
        throw arguments.usageError("--dataset '\(dataset)' is not a dataset name (1-64 of A-Z a-z 0-9 . _ -, not starting with '.')")
    }
    var configuration = SyncClient.Configuration(serverURL: url, dataset: dataset, token: token)
    configuration.certificateAuthorities = try certificateAuthorities(arguments)
    if fromSnapshot {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw RuntimeError("a file already exists at '\(path)'; --snapshot creates a new store")
        }
        configuration.backoff = Backoff(initial: .milliseconds(250), maximum: .seconds(4), maxAttempts: 4)
        let snapshot: HTTPTransport.Snapshot
        do {
            snapshot = try await SyncClient.createStoreFromSnapshot(at: path, configuration: configuration)
        } catch {
            throw RuntimeError(Output.describe(error))
        }
        let replica = try openReplica(path)
        Output.line("created store \(path) from the server's snapshot (replica \(replica.replicaID.uuidString), cursor \(snapshot.cursor))")
        return
    }
    let schemaData: Data
    do {
        schemaData = try Data(contentsOf: URL(fileURLWithPath: schemaPath))
    } catch {
        throw RuntimeError("cannot read the schema file '\(schemaPath)': \(error.localizedDescription)")
    }
    let schema: SchemaDocument
    do {
        schema = try SchemaDocument(jsonData: schemaData)
    } catch {
        throw RuntimeError("'\(schemaPath)' is not a store schema: \(Output.describe(error))")
    }
    let existed = FileManager.default.fileExists(atPath: path)
    let replica: SyncReplica
    do {
        // The store will hold the token: created owner-only, so SQLite's -wal and -shm are too.
        if !existed { try OwnerOnlyFile.create(atPath: path) }
        // An existing store may only grow: the same schema, or one with additions.
        replica = try SyncReplica(store: try ObjectStore(path: path, schema: schema, policy: .additiveOnly))
    } catch {
        if !existed {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        throw RuntimeError("cannot \(existed ? "open" : "create") the store '\(path)': \(Output.describe(error))")
    }
    try configuration.save(in: replica)
    Output.line("\(existed ? "updated" : "created") store \(path) (replica \(replica.replicaID.uuidString), server \(url.absoluteString), dataset \(dataset))")
}

/// The absolute path of `--ca-file`, after checking it holds a PEM certificate.
private func certificateAuthorities(_ arguments: ParsedCommand) throws -> URL? {
    guard let path = arguments.value("ca-file") else { return nil }
    let file = URL(fileURLWithPath: path).standardizedFileURL
    let text: String
    do {
        text = try String(contentsOf: file, encoding: .utf8)
    } catch {
        throw RuntimeError("cannot read the certificate authorities file '\(path)': \(error.localizedDescription)")
    }
    guard text.contains("-----BEGIN CERTIFICATE-----") else {
        throw RuntimeError("'\(path)' holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
    }
    return file
}

/// Where `sync init` takes the bearer token from: `--token-file`, `--token -` (standard input),
/// `--token`, else `$SYNC_TOKEN`.
enum TokenSource {
    /// The environment variable read when no option names the token.
    static let environmentVariable = "SYNC_TOKEN"

    /// The token, from the first source given.
    static func read(_ arguments: ParsedCommand, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        let file = arguments.value("token-file")
        let option = arguments.value("token")
        let token: String
        switch (file, option) {
        case (.some, .some):
            throw arguments.usageError("give the token once: --token-file or --token, not both")
        case (.some(let path), nil):
            let contents: String
            do {
                contents = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw RuntimeError("cannot read the token file '\(path)': \(error.localizedDescription)")
            }
            token = firstLine(contents)
        case (nil, "-"):
            token = firstLine(readLine(strippingNewline: true) ?? "")
        case (nil, .some(let text)):
            token = text
        case (nil, nil):
            guard let text = environment[environmentVariable] else {
                throw arguments.usageError("give the dataset's token with --token-file PATH, --token - (standard input) or $\(environmentVariable)")
            }
            token = firstLine(text)
        }
        guard !token.isEmpty else { throw arguments.usageError("the token is empty") }
        return token
    }

    /// The first line of `text`, without surrounding spaces: token files often end in a newline.
    private static func firstLine(_ text: String) -> String {
        String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
