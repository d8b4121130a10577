/// An HTTP request method such as `GET` or `POST`.
///
/// Methods are case-sensitive tokens (RFC 9110 §9.1). Any syntactically valid token reaches the
/// handler, so routes can answer unknown methods with `405` or `501` themselves.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The method token exactly as it appeared in the request line.
    public let rawValue: String

    /// Creates a method from its token.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Creates a method from a string literal, e.g. `let method: HTTPMethod = "PURGE"`.
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    /// The method token.
    public var description: String { rawValue }

    /// `GET`: retrieve a representation.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`: like `GET` but the response carries no body.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `POST`: process the enclosed representation.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`: replace the target's state.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `PATCH`: partially modify the target.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `DELETE`: remove the target.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `OPTIONS`: describe communication options.
    public static let options = HTTPMethod(rawValue: "OPTIONS")
}
