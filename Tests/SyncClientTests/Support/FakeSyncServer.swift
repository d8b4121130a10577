import Foundation
@testable import HTTPServer
import SyncKit
@testable import SyncServer
import Synchronization

/// An in-memory stand-in for `syncd` speaking protocol v1 over a real `HTTPServer` on
/// 127.0.0.1: it keeps a log of pushed change sets and serves it by cursor, and can be told to
/// answer the next matching requests with an error, or to die in the middle of one.
final class FakeSyncServer: Sendable {
    enum Action: Sendable {
        /// Answer with this status and error body instead of handling the request.
        case error(status: Int, code: String, message: String, extra: [String: String] = [:])
        /// Handle the request (so its effects happen), then answer with this status and error body.
        case handleThenFail(status: Int)
        /// Shut the server down while the request is in flight: the connection closes without a response.
        case dropConnection
    }

    struct Fault: Sendable {
        var method: String
        var pathSuffix: String
        var query: String?
        var action: Action
        /// Called with the request when the fault fires (to look at client state mid-request).
        var observe: (@Sendable () -> Void)?
    }

    struct RecordedRequest: Sendable, CustomStringConvertible {
        var method: String
        var path: String
        var query: [String: String]
        var authorization: String?
        var body: Data
        /// The `Sync-Unpushed-Bounds` header of a pull, if it had one.
        var unpushedBounds: String? = nil
        /// The `Sync-Forgotten-Below` header of a pull, if it had one.
        var forgottenBelow: String? = nil
        var description: String { "\(method) \(path) \(query.sorted { $0.key < $1.key })" }
    }

    struct State {
        var schemaHash: String?
        var incompatibility: String?
        var log: [(cursor: Int, changeSet: ChangeSet)] = []
        var nextCursor = 1
        var faults: [Fault] = []
        var requests: [RecordedRequest] = []
        var vector = VersionVector()
        /// What `GET snapshot` serves: a store file, its cursor and the cursor's digest.
        var snapshot: (data: Data?, cursor: String, cursorDigest: String?)?
        /// The stable vector pull answers carry; none when `nil`.
        var stable: VersionVector?
    }

    let dataset: String
    let token: String
    let state = Mutex(State())
    private let server = Mutex<HTTPServer?>(nil)
    /// The port of the first start; later starts reuse it so clients keep their URL.
    private let boundPort = Mutex<UInt16>(0)

    init(dataset: String = "test", token: String = "secret") {
        self.dataset = dataset
        self.token = token
    }

    var url: URL { URL(string: "http://127.0.0.1:\(boundPort.withLock { $0 })")! }

    /// Starts serving (again, on the same port after ``stop()``).
    func start() throws {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: boundPort.withLock { $0 })
        configuration.workerCount = 2
        configuration.shutdownGracePeriod = .milliseconds(200)
        let http = HTTPServer(configuration: configuration) { [weak self] request in
            self?.handle(request) ?? .status(.serviceUnavailable)
        }
        try http.start()
        boundPort.withLock { $0 = http.port }
        server.withLock { $0 = http }
    }

    /// Shuts the server down and waits until it has stopped.
    func stop() {
        guard let http = server.withLock({ server -> HTTPServer? in defer { server = nil }; return server }) else { return }
        http.shutdown(gracePeriod: .milliseconds(100))
        http.wait()
    }

    deinit { stop() }

    // MARK: Test controls

    func inject(_ method: String, _ pathSuffix: String, query: String? = nil, _ action: Action, times: Int = 1,
                observe: (@Sendable () -> Void)? = nil) {
        state.withLock { state in
            for _ in 0..<times { state.faults.append(Fault(method: method, pathSuffix: pathSuffix, query: query, action: action, observe: observe)) }
        }
    }

    var requests: [RecordedRequest] { state.withLock { $0.requests } }

    /// Loses the newest `count` log entries, as a server restored from an older backup would.
    func forgetNewest(_ count: Int) {
        state.withLock { state in
            state.log.removeLast(count)
            var vector = VersionVector()
            for entry in state.log { vector[entry.changeSet.dot.replica] = max(vector[entry.changeSet.dot.replica], entry.changeSet.dot.seq) }
            state.vector = vector
        }
    }
    var logCount: Int { state.withLock { $0.log.count } }

    func requests(_ method: String, _ pathSuffix: String) -> [RecordedRequest] {
        requests.filter { $0.method == method && $0.path.hasSuffix(pathSuffix) }
    }

    // MARK: Handling

    private func handle(_ request: HTTPRequest) -> HTTPResponse {
        var query: [String: String] = [:]
        for item in request.queryItems { query[item.name] = item.value }
        let method = "\(request.method)".uppercased()
        let recorded = RecordedRequest(method: method, path: request.path, query: query,
                                       authorization: request.headers["Authorization"], body: request.body,
                                       unpushedBounds: request.headers["Sync-Unpushed-Bounds"],
                                       forgottenBelow: request.headers["Sync-Forgotten-Below"])
        let fault = state.withLock { state -> Fault? in
            state.requests.append(recorded)
            guard let index = state.faults.firstIndex(where: { fault in
                fault.method == method && request.path.hasSuffix(fault.pathSuffix)
                    && (fault.query.map { request.target.contains($0) } ?? true)
            }) else { return nil }
            return state.faults.remove(at: index)
        }
        fault?.observe?()
        switch fault?.action {
        case .error(let status, let code, let message, let extra)?:
            return FakeSyncServer.error(status, code, message, extra: extra)
        case .dropConnection?:
            server.withLock { $0 }?.shutdown(gracePeriod: .zero)
            Thread.sleep(forTimeInterval: 0.3)
            return FakeSyncServer.error(500, "dropped", "this response is never sent")
        case .handleThenFail(let status)?:
            _ = route(request, method: method, query: query)
            return FakeSyncServer.error(status, "internal", "failed after handling")
        case nil:
            return route(request, method: method, query: query)
        }
    }

    private func route(_ request: HTTPRequest, method: String, query: [String: String]) -> HTTPResponse {
        let prefix = "/v1/datasets/\(dataset)/"
        guard request.path.hasPrefix(prefix) else { return FakeSyncServer.error(404, "not_found", "no route \(request.path)") }
        guard request.headers["Authorization"] == "Bearer \(token)" else {
            var response = FakeSyncServer.error(401, "unauthorized", "missing or invalid bearer token")
            response.headers.add(name: "WWW-Authenticate", value: "Bearer")
            return response
        }
        switch (method, String(request.path.dropFirst(prefix.count))) {
        case ("PUT", "schema"): return registerSchema(request.body)
        case ("POST", "changesets"): return push(request.body)
        case ("GET", "changesets"): return pull(query)
        case ("GET", "snapshot"):
            guard let snapshot = state.withLock({ $0.snapshot }), let data = snapshot.data else {
                return FakeSyncServer.error(404, "schema_not_registered", "no snapshot")
            }
            var response = HTTPResponse(status: .ok, headers: ["Content-Type": "application/vnd.sqlite3", "Sync-Cursor": snapshot.cursor], body: data)
            if let digest = snapshot.cursorDigest { response.headers.add(name: "Sync-Cursor-Digest", value: digest) }
            return response
        default: return FakeSyncServer.error(404, "not_found", "no route \(method) \(request.path)")
        }
    }

    private func registerSchema(_ body: Data) -> HTTPResponse {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any], let hash = object["versionHash"] as? String else {
            return FakeSyncServer.error(400, "malformed_schema", "the schema is not a SchemaDocument")
        }
        return state.withLock { state in
            if let incompatibility = state.incompatibility { return FakeSyncServer.error(409, "schema_incompatible", incompatibility) }
            state.schemaHash = hash
            return FakeSyncServer.json(["versionHash": hash, "dataset": dataset])
        }
    }

    private func push(_ body: Data) -> HTTPResponse {
        let changeSets: [ChangeSet]
        do {
            changeSets = try ChangeSetCoding.decode(body).changeSets
        } catch {
            return FakeSyncServer.error(400, "malformed_change_set", "\(error)")
        }
        return state.withLock { state in
            guard state.schemaHash != nil else { return FakeSyncServer.error(404, "schema_not_registered", "no schema for \(dataset)") }
            var applied: [[String: Any]] = [], already: [[String: Any]] = []
            // Causality, as syncd checks it (batches here arrive in causal order): nothing is stored on refusal.
            var vector = state.vector
            for changeSet in changeSets where !vector.covers(changeSet.dot) {
                let ready = vector[changeSet.dot.replica] == changeSet.dot.seq - 1
                    && changeSet.vector.entries.allSatisfy { $0.key == changeSet.dot.replica || vector[$0.key] >= $0.value }
                guard ready else {
                    let serverVector = Dictionary(uniqueKeysWithValues: state.vector.entries.map { ($0.key.uuidString, $0.value) })
                    return FakeSyncServer.json(status: 409, ["error": [
                        "code": "causality_violation", "message": "change set \(changeSet.dot) depends on change sets the server lacks",
                        "vector": serverVector,
                    ] as [String: Any]])
                }
                vector[changeSet.dot.replica] = changeSet.dot.seq
            }
            for changeSet in changeSets {
                let dot: [String: Any] = ["replica": changeSet.dot.replica.uuidString, "seq": changeSet.dot.seq]
                if state.vector.covers(changeSet.dot) {
                    already.append(dot)
                } else {
                    state.log.append((state.nextCursor, changeSet))
                    state.nextCursor += 1
                    state.vector[changeSet.dot.replica] = changeSet.dot.seq
                    applied.append(dot)
                }
            }
            return FakeSyncServer.json([
                "applied": applied, "alreadyApplied": already, "cursor": String(state.nextCursor - 1),
                "vector": Dictionary(uniqueKeysWithValues: state.vector.entries.map { ($0.key.uuidString, $0.value) }),
            ])
        }
    }

    private func pull(_ query: [String: String]) -> HTTPResponse {
        guard let after = Int(query["after"] ?? "0"), after >= 0 else { return FakeSyncServer.error(400, "invalid_cursor", "bad cursor") }
        let limit = min(5000, Int(query["limit"] ?? "500") ?? 500)
        let exclude = query["exclude"].flatMap(UUID.init(uuidString:))
        return state.withLock { state in
            guard state.schemaHash != nil else { return FakeSyncServer.error(404, "schema_not_registered", "no schema for \(dataset)") }
            guard after < state.nextCursor else { return FakeSyncServer.error(400, "invalid_cursor", "cursor \(after) is beyond the log") }
            let entries = state.log.filter { $0.cursor > after }
            let scanned = entries.prefix(limit)
            let page = scanned.map(\.changeSet).filter { $0.dot.replica != exclude }
            let cursor = scanned.last?.cursor ?? after
            let batch = (try? ChangeSetCoding.encode(page, base: VersionVector())) ?? Data("{}".utf8)
            let more = entries.count > scanned.count
            let stable = state.stable.map { vector in
                #","stable":{"# + vector.sortedEntries.map { #""\#($0.replica.storageText)":\#($0.seq)"# }.joined(separator: ",") + "}"
            } ?? ""
            return .json(data: Data(#"{"changeSets":"#.utf8) + batch + Data(#","cursor":"\#(cursor)","more":\#(more)\#(stable)}"#.utf8))
        }
    }

    static func json(status: Int = 200, _ object: [String: Any]) -> HTTPResponse {
        var response = HTTPResponse.json(status: HTTPStatus(code: status), data: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
        response.headers.add(name: "Sync-Protocol", value: "1")
        return response
    }

    static func error(_ status: Int, _ code: String, _ message: String, extra: [String: String] = [:]) -> HTTPResponse {
        var body: [String: Any] = ["code": code, "message": message]
        for (key, value) in extra { body[key] = Int64(value).map { $0 as Any } ?? value }
        var response = HTTPResponse.json(
            status: HTTPStatus(code: status), data: (try? JSONSerialization.data(withJSONObject: ["error": body], options: [.sortedKeys])) ?? Data())
        response.headers.add(name: "Sync-Protocol", value: "1")
        return response
    }
}
