import Foundation

/// A complete HTTP request as handed to the application handler.
///
/// The server only builds one after the whole body has arrived, so handlers never block on the
/// network.
public struct HTTPRequest: Sendable {
    /// One `name=value` pair from the query string, percent-decoded.
    public struct QueryItem: Sendable, Hashable {
        /// The decoded parameter name.
        public var name: String
        /// The decoded value; empty when the parameter had no `=`.
        public var value: String

        /// Creates a query item.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The request method, e.g. `.get`.
    public var method: HTTPMethod
    /// The request target exactly as received, e.g. `/v1/items%20x?since=5`.
    public var target: String
    /// The percent-decoded path without the query, e.g. `/v1/items x`.
    ///
    /// `%2F` decodes to `/`; routes that must distinguish it can parse ``target`` instead.
    /// For the asterisk form (`OPTIONS *`) this is `*`.
    public var path: String
    /// The decoded query parameters in the order they appeared (`+` decodes to a space).
    public var queryItems: [QueryItem]
    /// The protocol version from the request line.
    public var version: HTTPVersion
    /// The request header fields.
    public var headers: HTTPHeaders
    /// The request body with any chunked framing removed; empty when there was none.
    public var body: Data
    /// The peer's address as `host:port`, e.g. `127.0.0.1:52114` or `[::1]:52114`.
    public var remoteAddress: String

    /// Creates a request; the server does this, tests and routers may too.
    public init(
        method: HTTPMethod,
        target: String,
        path: String,
        queryItems: [QueryItem] = [],
        version: HTTPVersion = .http1_1,
        headers: HTTPHeaders = HTTPHeaders(),
        body: Data = Data(),
        remoteAddress: String = ""
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.queryItems = queryItems
        self.version = version
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// The first value of query parameter `name`, or `nil` if absent.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// Every value of query parameter `name`, e.g. for `?tag=a&tag=b`.
    public func queryValues(_ name: String) -> [String] {
        queryItems.compactMap { $0.name == name ? $0.value : nil }
    }

    /// Whether the client wants the connection kept open after this exchange.
    ///
    /// HTTP/1.1 keeps connections by default; HTTP/1.0 only when it asks with `keep-alive`.
    public var wantsKeepAlive: Bool {
        if headers.containsToken("close", in: "Connection") { return false }
        if version.major == 1 && version.minor == 0 {
            return headers.containsToken("keep-alive", in: "Connection")
        }
        return true
    }
}
