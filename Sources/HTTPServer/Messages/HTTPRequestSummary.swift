/// What happened in one request/response exchange, for access logs and metrics.
public struct HTTPRequestSummary: Sendable {
    /// The request method, or `-` when the request was too malformed to have one.
    public var method: String
    /// The decoded request path, or `-` when the request was too malformed to have one.
    public var path: String
    /// The response status code.
    public var status: Int
    /// Bytes the request occupied on the wire (head plus body framing).
    public var requestBytes: Int
    /// Bytes of the response handed to the kernel.
    public var responseBytes: Int
    /// From the request's first byte arriving to its response's last byte being written.
    public var duration: Duration
    /// The client's `host:port`.
    public var remoteAddress: String

    /// Creates a summary.
    public init(
        method: String, path: String, status: Int, requestBytes: Int, responseBytes: Int,
        duration: Duration, remoteAddress: String
    ) {
        self.method = method
        self.path = path
        self.status = status
        self.requestBytes = requestBytes
        self.responseBytes = responseBytes
        self.duration = duration
        self.remoteAddress = remoteAddress
    }
}
