import Codecs
import Foundation
@testable import HTTPServer
import SyncKit
import TestSupport
import Testing

@testable import SyncServer

// A small schema with every relationship shape the wire carries:
// - Board.cards / Card.board: ordered one-to-many (link on Card.board, position on Board.cards)
// - Card.tags / Tag.cards: many-to-many (link/unlink on the join table's owner side)

@Entity final class Board {
    var title: String = ""
    var rank: Int = 0
    @Relationship(inverse: "board", deleteRule: .cascade) var cards: [Card] = []
}

@Entity final class Card {
    var text: String = ""
    var points: Int = 0
    var weight: Double = 0
    var note: String? = nil
    var payload: Data = Data()
    @Relationship(inverse: "cards", deleteRule: .nullify) var board: Board?
    @Relationship(inverse: "cards", deleteRule: .nullify) var tags: Set<Tag> = []
}

@Entity final class Tag {
    var name: String = ""
    @Relationship(inverse: "tags", deleteRule: .nullify) var cards: Set<Card> = []
}

let boardEntities: [any PersistentEntity.Type] = [Board.self, Card.self, Tag.self]

/// The fixed "now" of the server clock in route tests (milliseconds since 1970).
let serverNow: UInt64 = 1_700_000_000_000

/// A fake wall clock for client replicas: every reading advances it by one millisecond.
final class TickingClock: @unchecked Sendable {
    // @unchecked: `now` is only accessed while holding `lock`.
    private let lock = NSLock()
    private var now: UInt64

    init(start: UInt64 = serverNow - 60_000) { now = start }

    func read() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        now += 1
        return now
    }
}

/// A client: a store file with the board entities, its sync replica and a context.
final class ClientReplica {
    let file: TemporaryStoreFile
    var path: String { file.path }
    let store: ObjectStore
    let replica: SyncReplica
    let context: ObjectContext

    init(clock: TickingClock = TickingClock()) throws {
        file = TemporaryStoreFile(prefix: "syncd-client")
        store = try ObjectStore(path: file.path, entities: boardEntities)
        replica = try SyncReplica(store: store, wallClock: { clock.read() })
        context = try store.makeContext()
    }

    /// The replica's ID and key, as its pushes send them.
    var credentials: ReplicaCredentials {
        get throws { try replica.credentials() }
    }

    /// The change sets the server (with `vector`) lacks, as a push body.
    func batch(missingFrom vector: VersionVector = VersionVector()) throws -> Data {
        try ChangeSetCoding.encode(try replica.changeSets(missingFrom: vector), base: vector)
    }

    /// Saves a new board with `cards` cards; returns it.
    @discardableResult
    func addBoard(_ title: String, cards: Int = 0) throws -> Board {
        let board = Board()
        board.title = title
        for index in 0..<cards {
            let card = Card()
            card.text = "\(title) card \(index)"
            card.points = index
            card.board = board
        }
        context.insert(board)
        try context.save()
        return board
    }
}

/// A server in-process: a temporary data directory, a ``SyncService`` with a fixed clock, and
/// tokens for the datasets `main` and `other`. Requests go straight to the handler, no sockets.
final class ServerFixture {
    let temporary: TemporaryDirectory
    /// The server's data directory.
    let directory: URL
    let service: SyncService
    let token: String
    let otherToken: String
    /// The database of a server with ``ServerStorage/postgreSQL`` storage.
    let database: PostgreSQLTestDatabase?

    /// - Parameters:
    ///   - dataDirectory: where the server keeps its data; a new temporary directory by default.
    ///   - storage: SQLite files in the data directory, or a new PostgreSQL database.
    ///   - configure: changes the service's configuration before it starts (limits, clock).
    init(maxClockSkew: Double = 300, now: UInt64 = serverNow, dataDirectory: URL? = nil, storage: ServerStorage = .sqlite,
         replicaPolicy: ReplicaPolicy = ReplicaPolicy(), configure: (inout SyncServiceConfiguration) -> Void = { _ in }) throws {
        temporary = try TemporaryDirectory(prefix: "syncd-test")
        directory = dataDirectory ?? temporary.url
        database = storage == .postgreSQL ? try PostgreSQLTestDatabase() : nil
        service = try ServerFixture.service(directory: directory, databaseURL: database?.url, maxClockSkew: maxClockSkew, now: now,
                                            replicaPolicy: replicaPolicy, configure: configure)
        token = try service.tokens.add(dataset: "main")
        otherToken = try service.tokens.add(dataset: "other")
    }

    /// Another instance on `other`'s PostgreSQL database, with a data directory (its caches) of
    /// its own: it serves the same datasets and accepts the same tokens.
    init(sharingDatabaseWith other: ServerFixture, now: UInt64 = serverNow,
         configure: (inout SyncServiceConfiguration) -> Void = { _ in }) throws {
        temporary = try TemporaryDirectory(prefix: "syncd-test")
        directory = temporary.url
        database = nil
        service = try ServerFixture.service(directory: directory, databaseURL: try #require(other.database?.url), maxClockSkew: 300, now: now,
                                            configure: configure)
        token = other.token
        otherToken = other.otherToken
    }

    private static func service(directory: URL, databaseURL: String?, maxClockSkew: Double, now: UInt64,
                                replicaPolicy: ReplicaPolicy = ReplicaPolicy(),
                                configure: (inout SyncServiceConfiguration) -> Void = { _ in }) throws -> SyncService {
        var configuration = SyncServiceConfiguration(dataDirectory: directory)
        configuration.replicaPolicy = replicaPolicy
        configuration.maxClockSkew = maxClockSkew
        configuration.clock = { now }
        configuration.databaseURL = databaseURL
        configure(&configuration)
        return try SyncService(configuration: configuration)
    }

    /// Sends a request to the handler, with `token` as bearer unless it is `nil`, and `extraHeaders`.
    func send(_ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: Data = Data(),
              token: String? = "default", extraHeaders: [(String, String)] = []) -> HTTPResponse {
        var headers = HTTPHeaders()
        if let token { headers.add(name: "Authorization", value: "Bearer \(token == "default" ? self.token : token)") }
        for (name, value) in extraHeaders { headers.add(name: name, value: value) }
        let queryItems = query.map { HTTPRequest.QueryItem(name: $0.0, value: $0.1) }
        let target = path + (query.isEmpty ? "" : "?" + query.map { "\($0.0)=\($0.1)" }.joined(separator: "&"))
        return service.handle(HTTPRequest(method: method, target: target, path: path, queryItems: queryItems, headers: headers,
                                          body: body, remoteAddress: "127.0.0.1:50000"))
    }

    /// Registers the board schema for `dataset` and expects 200.
    @discardableResult
    func registerSchema(_ schema: Data? = nil, dataset: String = "main") throws -> HTTPResponse {
        let body = try schema ?? ClientReplica().store.exportSchema()
        let response = send(.put, "/v1/datasets/\(dataset)/schema", body: body, token: dataset == "main" ? token : otherToken)
        #expect(response.status == .ok, "schema registration: \(response.text)")
        return response
    }

    /// Pushes `body` as `pusher` (the `Sync-Replica-ID` and `Sync-Replica-Key` headers), or
    /// without naming a replica.
    func push(_ body: Data, as pusher: ReplicaCredentials? = nil) -> HTTPResponse {
        send(.post, "/v1/datasets/main/changesets", body: body, extraHeaders: ServerFixture.headers(of: pusher))
    }

    /// The push headers naming `pusher`.
    static func headers(of pusher: ReplicaCredentials?) -> [(String, String)] {
        guard let pusher else { return [] }
        return [("Sync-Replica-ID", pusher.replica.storageText), ("Sync-Replica-Key", pusher.keyHex)]
    }

    func pull(after: String? = nil, afterDigest: String? = nil, limit: Int? = nil, exclude: ReplicaID? = nil) -> HTTPResponse {
        var query: [(String, String)] = []
        if let after { query.append(("after", after)) }
        if let afterDigest { query.append(("afterDigest", afterDigest)) }
        if let limit { query.append(("limit", String(limit))) }
        if let exclude { query.append(("exclude", exclude.uuidString)) }
        return send(.get, "/v1/datasets/main/changesets", query: query)
    }

    /// Every entity and join table row of `dataset`'s merged state, from a snapshot (which
    /// works with either storage), as ``ProtocolVectorTests/rows(at:)`` reads them.
    func snapshotFile(of dataset: String = "main") throws -> String {
        let path = temporary.file("snapshot-\(UUID().uuidString).sqlite")
        try service.registry.dataset(dataset).snapshot().data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The server's version vector, read from its store.
    func serverVector() throws -> VersionVector {
        try service.registry.dataset("main").requireEngine().versionVector()
    }

    /// The names of the tables of the store file at `path`.
    static func tableNames(at path: String) throws -> [String] {
        try SQLiteConnection(path: path, readOnly: true).rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").compactMap {
            if case .text(let name) = $0[0] { name } else { nil }
        }
    }

    /// Every row of every entity and join table of `path`, as text.
    static func entityRows(at path: String) throws -> [String] {
        try storeDigest(path).split(separator: "\n").map(String.init)
    }
}

extension HTTPResponse {
    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (empty when it is not one).
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
    }

    /// `error.code` of an error body.
    var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
    var errorMessage: String { ((json["error"] as? [String: Any])?["message"] as? String) ?? "" }
}

/// `document` with an additive change: Card gets an optional text attribute `color` (a copy of
/// `note` under another name). The version hash is left for ``rehashed(_:)`` to compute.
func addingCardColor(to document: SchemaDocument) throws -> SchemaDocument {
    var changed = document
    let cardIndex = try #require(changed.entities.firstIndex { $0.name == "Card" })
    var color = try #require(changed.entities[cardIndex].attributes.first { $0.name == "note" })
    color.name = "color"
    color.persistentName = "color"
    color.columns = color.columns.map { column in
        var column = column
        column.name = "color"
        return column
    }
    changed.entities[cardIndex].attributes.append(color)
    return changed
}

/// A schema document re-hashed after a test changed it, the way LocalStore hashes it.
func rehashed(_ document: SchemaDocument) throws -> Data {
    var document = document
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
    document.versionHash = SHA256.hexDigest(String(decoding: try encoder.encode(document.entities), as: UTF8.self))
    return try document.jsonData()
}

/// `document` with `Card.text` renamed `body` (`originalName: "text"`), re-hashed.
func renamingCardText(_ document: SchemaDocument) throws -> Data {
    var renamed = document
    let cardIndex = try #require(renamed.entities.firstIndex { $0.name == "Card" })
    let textIndex = try #require(renamed.entities[cardIndex].attributes.firstIndex { $0.name == "text" })
    renamed.entities[cardIndex].attributes[textIndex].name = "body"
    renamed.entities[cardIndex].attributes[textIndex].persistentName = "body"
    renamed.entities[cardIndex].attributes[textIndex].originalName = "text"
    renamed.entities[cardIndex].attributes[textIndex].columns[0].name = "body"
    return try rehashed(renamed)
}
