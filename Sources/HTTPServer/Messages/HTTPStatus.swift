/// A response status: the numeric code and the reason phrase sent with it.
public struct HTTPStatus: Hashable, Sendable, CustomStringConvertible {
    /// The three-digit status code, e.g. `404`.
    public var code: Int
    /// The reason phrase, e.g. `Not Found`; informational only, clients ignore it.
    public var reasonPhrase: String

    /// Creates a status. When `reasonPhrase` is `nil` the standard phrase for `code` is used.
    public init(code: Int, reasonPhrase: String? = nil) {
        self.code = code
        self.reasonPhrase = reasonPhrase ?? Self.standardReasonPhrase(for: code)
    }

    /// `"404 Not Found"`.
    public var description: String { "\(code) \(reasonPhrase)" }

    /// Whether responses with this status must not carry a body (1xx, 204, 304).
    public var forbidsBody: Bool {
        (100..<200).contains(code) || code == 204 || code == 304
    }

    /// `100 Continue`
    public static let `continue` = HTTPStatus(code: 100)
    /// `200 OK`
    public static let ok = HTTPStatus(code: 200)
    /// `201 Created`
    public static let created = HTTPStatus(code: 201)
    /// `202 Accepted`
    public static let accepted = HTTPStatus(code: 202)
    /// `204 No Content`
    public static let noContent = HTTPStatus(code: 204)
    /// `301 Moved Permanently`
    public static let movedPermanently = HTTPStatus(code: 301)
    /// `304 Not Modified`
    public static let notModified = HTTPStatus(code: 304)
    /// `400 Bad Request`
    public static let badRequest = HTTPStatus(code: 400)
    /// `401 Unauthorized`
    public static let unauthorized = HTTPStatus(code: 401)
    /// `403 Forbidden`
    public static let forbidden = HTTPStatus(code: 403)
    /// `404 Not Found`
    public static let notFound = HTTPStatus(code: 404)
    /// `405 Method Not Allowed`
    public static let methodNotAllowed = HTTPStatus(code: 405)
    /// `408 Request Timeout`
    public static let requestTimeout = HTTPStatus(code: 408)
    /// `409 Conflict`
    public static let conflict = HTTPStatus(code: 409)
    /// `410 Gone`
    public static let gone = HTTPStatus(code: 410)
    /// `411 Length Required`
    public static let lengthRequired = HTTPStatus(code: 411)
    /// `412 Precondition Failed`
    public static let preconditionFailed = HTTPStatus(code: 412)
    /// `413 Content Too Large`
    public static let contentTooLarge = HTTPStatus(code: 413)
    /// `415 Unsupported Media Type`
    public static let unsupportedMediaType = HTTPStatus(code: 415)
    /// `422 Unprocessable Content`
    public static let unprocessableContent = HTTPStatus(code: 422)
    /// `429 Too Many Requests`
    public static let tooManyRequests = HTTPStatus(code: 429)
    /// `431 Request Header Fields Too Large`
    public static let requestHeaderFieldsTooLarge = HTTPStatus(code: 431)
    /// `500 Internal Server Error`
    public static let internalServerError = HTTPStatus(code: 500)
    /// `501 Not Implemented`
    public static let notImplemented = HTTPStatus(code: 501)
    /// `503 Service Unavailable`
    public static let serviceUnavailable = HTTPStatus(code: 503)
    /// `505 HTTP Version Not Supported`
    public static let httpVersionNotSupported = HTTPStatus(code: 505)
    /// `507 Insufficient Storage`
    public static let insufficientStorage = HTTPStatus(code: 507)

    /// The IANA-registered reason phrase for `code`, or a generic one for unknown codes.
    public static func standardReasonPhrase(for code: Int) -> String {
        switch code {
        case 100: return "Continue"
        case 101: return "Switching Protocols"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 406: return "Not Acceptable"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 411: return "Length Required"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 415: return "Unsupported Media Type"
        case 416: return "Range Not Satisfiable"
        case 417: return "Expectation Failed"
        case 422: return "Unprocessable Content"
        case 426: return "Upgrade Required"
        case 428: return "Precondition Required"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        case 507: return "Insufficient Storage"
        default:
            switch code {
            case 100..<200: return "Informational"
            case 200..<300: return "Success"
            case 300..<400: return "Redirection"
            case 400..<500: return "Client Error"
            default: return "Server Error"
            }
        }
    }
}
