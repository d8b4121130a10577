import Foundation
import SyncKit

/// `todos sync [--server URL] [--dataset NAME] [--token TOKEN]`
@MainActor enum SyncCommand {
    static let help = """
        Usage: todos sync [--server URL] [--dataset NAME] [--token TOKEN]

        Sends this store's changes to a syncd server and brings in everyone else's.
        Each setting comes from its option, else the environment (TODOS_SERVER, TODOS_DATASET,
        TODOS_TOKEN), else what the store saved from its last sync; a sync saves what it used,
        so later syncs need no options. Create a token with 'syncd token add --dataset NAME'.
        """

    static func run(_ arguments: [String], store: () throws -> TodoStore) async throws {
        let arguments = try Arguments(arguments, command: "sync", options: ["--server", "--dataset", "--token"])
        try arguments.expectPositionals(0, 0, what: "no arguments")
        let environment = ProcessInfo.processInfo.environment
        func setting(_ option: String, _ variable: String) -> String? {
            (arguments[option] ?? environment[variable]).flatMap { $0.isEmpty ? nil : $0 }
        }
        let serverText = setting("--server", "TODOS_SERVER")
        var serverURL: URL?
        if let serverText {
            guard let url = URL(string: serverText), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
                throw UsageError(message: "'\(serverText)' is not a server URL (e.g. http://127.0.0.1:8080)", command: "sync")
            }
            serverURL = url
        }
        let dataset = setting("--dataset", "TODOS_DATASET")
        if let dataset, !HTTPTransport.isValidDatasetName(dataset) {
            throw UsageError(message: "'\(dataset)' is not a dataset name: 1-64 characters of A-Z a-z 0-9 . _ -, not starting with '.'", command: "sync")
        }
        let token = setting("--token", "TODOS_TOKEN")

        let store = try store()
        let saved = try SyncClient.Configuration.stored(in: store.replica)
        guard let server = serverURL ?? saved?.serverURL else {
            throw UsageError(message: "no server yet: give --server URL (or set TODOS_SERVER)", command: "sync")
        }
        guard let dataset = dataset ?? saved?.dataset else {
            throw UsageError(message: "no dataset yet: give --dataset NAME (or set TODOS_DATASET)", command: "sync")
        }
        guard let token = token ?? saved.flatMap({ $0.token.isEmpty ? nil : $0.token }) else {
            throw UsageError(message: "no token yet: give --token TOKEN (or set TODOS_TOKEN); 'syncd token add --dataset \(dataset)' makes one", command: "sync")
        }
        var configuration = SyncClient.Configuration(serverURL: server, dataset: dataset, token: token)
        // A command-line tool should say quickly that the server is down rather than retry for long.
        configuration.backoff = Backoff(maxAttempts: 2)
        configuration.requestTimeout = .seconds(30)

        let client = SyncClient(replica: store.replica, configuration: configuration)
        let report: SyncReport
        do {
            report = try await client.sync()
        } catch {
            throw ToolError("sync with \(server.absoluteString) failed: \(error)")
        }
        try configuration.save(in: store.replica)

        var summary = "Synced with \(server.absoluteString) (dataset \(dataset)): "
        summary += "sent \(count(report.pushed, "change set")), received \(report.pulled)"
        if report.newConflicts > 0 {
            summary += ", \(count(report.newConflicts, "new conflict")) (see 'todos conflicts')"
        }
        print(summary)
    }

    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }
}
