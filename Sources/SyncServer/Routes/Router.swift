import Foundation

/// Matches a request's method and path against route patterns such as
/// `/v1/datasets/{dataset}/schema` and runs the route's handler.
///
/// A path that matches no pattern is `404 not_found`; one that matches a pattern but not its
/// method is `405 method_not_allowed` with `Allow`. `GET` routes also answer `HEAD`.
package struct Router: Sendable {
    /// Values of a matched pattern's `{parameters}`.
    package typealias Parameters = [String: String]
    package typealias Handler = @Sendable (HTTPRequest, Parameters) throws -> HTTPResponse

    struct Route: Sendable {
        let method: HTTPMethod
        let pattern: String
        let segments: [Segment]
        let handler: Handler
    }

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    /// The outcome of matching.
    package enum Match {
        case found(pattern: String, parameters: Parameters, handler: Handler)
        case methodNotAllowed(pattern: String, allowed: [HTTPMethod])
        case notFound
    }

    private var routes: [Route] = []

    package init() {}

    /// Adds a route; `pattern` segments written `{name}` match any one non-empty segment.
    package mutating func add(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping Handler) {
        let segments = Router.split(pattern).map { segment -> Segment in
            let segment = String(segment)
            if segment.hasPrefix("{") && segment.hasSuffix("}") { return .parameter(String(segment.dropFirst().dropLast())) }
            return .literal(segment)
        }
        routes.append(Route(method: method, pattern: pattern, segments: segments, handler: handler))
    }

    /// The route for `method` and `path`.
    package func match(method: HTTPMethod, path: String) -> Match {
        let parts = Router.split(path)
        var allowed: [HTTPMethod] = []
        var matchedPattern: String?
        for route in routes {
            guard let parameters = Router.bind(route.segments, to: parts) else { continue }
            if route.method == method || (method == .head && route.method == .get) {
                return .found(pattern: route.pattern, parameters: parameters, handler: route.handler)
            }
            matchedPattern = matchedPattern ?? route.pattern
            if !allowed.contains(route.method) { allowed.append(route.method) }
            if route.method == .get && !allowed.contains(.head) { allowed.append(.head) }
        }
        if let matchedPattern { return .methodNotAllowed(pattern: matchedPattern, allowed: allowed) }
        return .notFound
    }

    /// The pattern `path` matches with any method (for metrics labels), or `nil`.
    package func pattern(for path: String) -> String? {
        let parts = Router.split(path)
        return routes.first { Router.bind($0.segments, to: parts) != nil }?.pattern
    }

    /// Runs the matching route; errors it throws become their JSON error responses.
    package func handle(_ request: HTTPRequest) -> HTTPResponse {
        switch match(method: request.method, path: request.path) {
        case .found(_, let parameters, let handler):
            do {
                return try handler(request, parameters)
            } catch {
                return APIError.from(error).response
            }
        case .methodNotAllowed(_, let allowed):
            return APIError.methodNotAllowed(request.method, allowed: allowed).response
        case .notFound:
            return APIError.notFound(request.path).response
        }
    }

    private static func split(_ path: String) -> [Substring] {
        // Keep empty segments (`//`, a trailing `/`) so they never match a pattern by accident.
        guard path.hasPrefix("/") else { return [Substring(path)] }
        return path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
    }

    private static func bind(_ segments: [Segment], to parts: [Substring]) -> Parameters? {
        guard segments.count == parts.count else { return nil }
        var parameters: Parameters = [:]
        for (segment, part) in zip(segments, parts) {
            switch segment {
            case .literal(let literal):
                guard part == literal else { return nil }
            case .parameter(let name):
                guard !part.isEmpty else { return nil }
                parameters[name] = String(part)
            }
        }
        return parameters
    }
}
