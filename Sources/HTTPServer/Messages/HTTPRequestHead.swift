import Foundation

/// A request whose head has arrived but whose body has not been read yet, as shown to an
/// ``HTTPServer/Admission`` check.
///
/// Refusing a request at this point costs the server nothing for its body: an unauthenticated
/// upload is answered before its first body byte is buffered.
public struct HTTPRequestHead: Sendable {
    /// The request method, e.g. `.post`.
    public var method: HTTPMethod
    /// The request target exactly as received.
    public var target: String
    /// The percent-decoded path without the query (see ``HTTPRequest/path``).
    public var path: String
    /// The decoded query parameters in the order they appeared.
    public var queryItems: [HTTPRequest.QueryItem]
    /// The protocol version from the request line.
    public var version: HTTPVersion
    /// The request header fields.
    public var headers: HTTPHeaders
    /// The declared `Content-Length`, or `nil` for a chunked body, whose size is only known once
    /// it has arrived.
    public var contentLength: Int?
    /// The peer's address as `host:port`.
    public var remoteAddress: String
}

/// What an ``HTTPServer/Admission`` check decides about a request whose body has not been read.
public enum RequestAdmission: Sendable {
    /// Read the body (sending `100 Continue` first if the client asked for it), then run the handler.
    case proceed
    /// Send this response instead and close the connection without reading the body.
    case respond(HTTPResponse)
}
