import Codecs
import Foundation
import HTTPServer
import SQLiteDatabase
import SyncEngine

/// An error answered to a client: an HTTP status and the protocol's JSON body
/// `{"error": {"code": "...", "message": "...", ...extra}}`.
package struct APIError: Error, Sendable {
    /// An extra member of the error object.
    package enum Extra: Sendable, Equatable {
        case integer(UInt64)
        case string(String)
        case vector(VersionVector)
    }

    package var status: HTTPStatus
    package var code: String
    package var message: String
    package var extra: [String: Extra]
    package var headers: HTTPHeaders

    package init(_ status: HTTPStatus, _ code: String, _ message: String, extra: [String: Extra] = [:], headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra
        self.headers = headers
    }

    package var response: HTTPResponse {
        var response = HTTPResponse.json(status: status, data: APIError.body(code: code, message: message, extra: extra))
        for field in headers { response.headers.replaceOrAdd(name: field.name, value: field.value) }
        return response
    }

    static func body(code: String, message: String, extra: [String: Extra] = [:]) -> Data {
        var object: [String: JSONValue] = ["code": .string(code), "message": .string(message)]
        for (key, value) in extra {
            switch value {
            case .integer(let number): object[key] = .unsignedInteger(number)
            case .string(let text): object[key] = .string(text)
            case .vector(let vector): object[key] = .vector(vector)
            }
        }
        return JSONValue.object(["error": .object(object)]).data
    }

    // MARK: The protocol's errors

    static func unauthorized(_ message: String) -> APIError {
        APIError(.unauthorized, "unauthorized", message, headers: ["WWW-Authenticate": "Bearer"])
    }

    static func forbidden(_ dataset: String) -> APIError {
        APIError(.forbidden, "forbidden", "the token does not belong to the dataset '\(dataset)'")
    }

    /// A token used after its expiry: 401 like an unknown token, with a message that says why.
    static func tokenExpired(at expires: Int64) -> APIError {
        let date = Date(timeIntervalSince1970: TimeInterval(expires)).formatted(.iso8601)
        return APIError(.unauthorized, "unauthorized", "the bearer token expired at \(date); ask for a new one ('syncd token add')",
                        headers: ["WWW-Authenticate": "Bearer error=\"invalid_token\", error_description=\"the token expired\""])
    }

    /// A token of the right dataset whose scope does not allow the request (a read-only token
    /// pushing or registering a schema).
    static func insufficientScope(dataset: String, granted: TokenScope) -> APIError {
        APIError(.forbidden, "insufficient_scope",
                 "the token is \(granted.rawValue) for the dataset '\(dataset)'; pushing and registering a schema need a read-write token",
                 extra: ["scope": .string(granted.rawValue), "requiredScope": .string(TokenScope.readWrite.rawValue)],
                 headers: ["WWW-Authenticate": "Bearer error=\"insufficient_scope\", scope=\"read-write\""])
    }

    static func invalidDataset(_ name: String) -> APIError {
        APIError(.badRequest, "invalid_dataset",
                 "dataset names are 1-64 characters of A-Z, a-z, 0-9, '.', '_' and '-', not starting with '.'; got '\(name.prefix(80))'")
    }

    static func notFound(_ path: String) -> APIError {
        APIError(.notFound, "not_found", "no route matches \(path.prefix(200))")
    }

    static func methodNotAllowed(_ method: HTTPMethod, allowed: [HTTPMethod]) -> APIError {
        let allow = allowed.map(\.rawValue).joined(separator: ", ")
        return APIError(.methodNotAllowed, "method_not_allowed", "\(method.rawValue.prefix(20)) is not allowed here; use \(allow)", headers: ["Allow": allow])
    }

    static func invalidParameter(_ message: String) -> APIError {
        APIError(.badRequest, "invalid_parameter", message)
    }

    /// Maps any error a route throws to what the client sees. Unknown errors are 500s whose
    /// message does not leak internals beyond the error's description.
    static func from(_ error: any Error) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as DatasetError:
            switch error {
            case .schemaNotRegistered(let dataset):
                return APIError(.notFound, "schema_not_registered", "the dataset '\(dataset)' has no schema yet: PUT /v1/datasets/\(dataset)/schema first")
            case .invalidSchema(let message):
                return APIError(.badRequest, "invalid_schema", message)
            case .schemaIncompatible(let message):
                return APIError(.conflict, "schema_incompatible", message)
            case .clockSkew(let message, let serverTime):
                return APIError(.unprocessableContent, "clock_skew", message, extra: ["serverTime": .integer(serverTime)])
            case .causalityViolation(let message, let vector):
                return APIError(.conflict, "causality_violation", message, extra: ["vector": .vector(vector)])
            case .invalidCursor(let message):
                return APIError(.badRequest, "invalid_cursor", message)
            case .replicaRetired(let message):
                return APIError(.gone, "replica_retired", message)
            case .historyCompacted(let message, let logStart):
                return APIError(.gone, "history_compacted", message, extra: ["logStart": .integer(UInt64(max(0, logStart)))])
            }
        case let error as SyncError:
            switch error.code {
            case .malformedChangeSet: return APIError(.badRequest, error.code.rawValue, error.message)
            case .causalityViolation: return APIError(.conflict, error.code.rawValue, error.message)
            case .schemaMismatch: return APIError(.unprocessableContent, error.code.rawValue, error.message)
            case .conflictingChangeSet: return APIError(.conflict, error.code.rawValue, error.message)
            case .clockSkew: return APIError(.unprocessableContent, error.code.rawValue, error.message)
            case .unverifiedAuthor:
                let dot: [String: Extra] = error.dot.map { ["replica": .string($0.replica.storageText), "seq": .integer($0.seq)] } ?? [:]
                return APIError(.forbidden, error.code.rawValue, error.message, extra: dot)
            case .replicaKeyMismatch: return APIError(.forbidden, error.code.rawValue, error.message)
            case .notSyncable: return APIError(.internalServerError, "internal_error", "the dataset's store is damaged: \(error.message)")
            case .unsupportedStoreFormat, .invalidOutboxTransition, .historyCompacted:
                return APIError(.internalServerError, "internal_error", "the dataset's store cannot be used: \(error.message)")
            }
        case let error as StoreError:
            switch error.code {
            case .locked:
                return APIError(.serviceUnavailable, "busy", "the dataset is busy; retry shortly", headers: ["Retry-After": "1"])
            case .migrationImpossible:
                return APIError(.conflict, "schema_incompatible", error.message)
            case .invalidSchema:
                return APIError(.badRequest, "invalid_schema", error.message)
            case .diskFull:
                return insufficientStorage(error.message)
            case .uniqueViolation, .countViolation, .deleteDenied, .objectNotFound:
                // The merge resolves these itself; reaching here means the batch does not fit the schema.
                return APIError(.unprocessableContent, "schema_mismatch", error.message)
            default:
                return APIError(.internalServerError, "internal_error", "the server could not complete the request: \(error.code.rawValue): \(error.message)")
            }
        case let error as CocoaError where error.code == .fileWriteOutOfSpace:
            return insufficientStorage(error.localizedDescription)
        case let error as NSError where error.domain == NSPOSIXErrorDomain && error.code == Int(ENOSPC):
            return insufficientStorage(error.localizedDescription)
        default:
            return APIError(.internalServerError, "internal_error", "the server could not complete the request: \(error)")
        }
    }

    /// The server's disk is full: nothing was stored, the dataset is as it was, and the same
    /// request succeeds once the operator frees space.
    static func insufficientStorage(_ detail: String) -> APIError {
        APIError(.insufficientStorage, "insufficient_storage",
                 "the server has no space left to store this; nothing was changed, retry once space is freed (\(detail))",
                 headers: ["Retry-After": "60"])
    }
}

extension JSONValue {
    /// A version vector as the protocol writes it: `{"<replica>": seq, ...}`, replicas in
    /// their stored form.
    static func vector(_ vector: VersionVector) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: vector.entries.map { ($0.key.storageText, JSONValue.unsignedInteger($0.value)) }))
    }
}
