/// Why a request could not be parsed, with the status the server answers before closing.
///
/// The message is sent to the client as the plain-text body, so it names the problem without
/// echoing attacker-controlled bytes back.
struct HTTPParseError: Error, Equatable, CustomStringConvertible {
    let status: HTTPStatus
    let message: String

    static func badRequest(_ message: String) -> HTTPParseError {
        HTTPParseError(status: .badRequest, message: message)
    }

    static func headersTooLarge(limit: Int) -> HTTPParseError {
        HTTPParseError(
            status: .requestHeaderFieldsTooLarge,
            message: "request line and header fields exceed \(limit) bytes"
        )
    }

    static func bodyTooLarge(limit: Int) -> HTTPParseError {
        HTTPParseError(status: .contentTooLarge, message: "request body exceeds \(limit) bytes")
    }

    var description: String { "\(status.code) \(message)" }

    /// The response sent for this error; the caller adds `Connection: close`.
    var response: HTTPResponse {
        .text("\(status.code) \(status.reasonPhrase): \(message)\n", status: status)
    }
}
