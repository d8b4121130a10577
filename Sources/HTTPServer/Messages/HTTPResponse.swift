import Foundation
import Codecs

/// A response produced by the application handler.
///
/// The server owns framing: it always writes `Content-Length` (except for statuses that forbid a
/// body), adds `Connection: close` when it is going to close, and ignores any `Content-Length`,
/// `Transfer-Encoding` or `Connection` fields set here other than `Connection: close`, which it
/// honours. Fields containing CR, LF or NUL are dropped so a handler cannot split responses.
public struct HTTPResponse: Sendable {
    /// The status code and reason phrase.
    public var status: HTTPStatus
    /// Header fields to send.
    public var headers: HTTPHeaders
    /// The body bytes; not sent for `HEAD` requests or statuses that forbid a body.
    public var body: Data

    /// Creates a response.
    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: ["Content-Type": "text/plain; charset=utf-8"],
            body: Data(text.utf8)
        )
    }

    /// An `application/json` response whose body is already encoded JSON.
    public static func json(status: HTTPStatus = .ok, data: Data) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: data)
    }

    /// An `application/json` response encoding `value`.
    ///
    /// Encoding failures are programming errors in the route, but the handler signature cannot
    /// throw, so they become a `500` with a JSON error body instead of crashing the server.
    public static func json<Value: Encodable>(
        status: HTTPStatus = .ok,
        _ value: Value,
        encoder: JSONEncoder = JSONEncoder()
    ) -> HTTPResponse {
        do {
            return json(status: status, data: try encoder.encode(value))
        } catch {
            return json(status: .internalServerError, data: JSONValue.object(["error": .string("response encoding failed")]).data)
        }
    }

    /// A plain-text response for a status, e.g. `404 Not Found` with body `Not Found`.
    public static func status(_ status: HTTPStatus) -> HTTPResponse {
        status.forbidsBody ? HTTPResponse(status: status) : text(status.reasonPhrase + "\n", status: status)
    }
}
