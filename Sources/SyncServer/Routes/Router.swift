import Foundation
import HTTPServer

/// Matches a request's method and path against route patterns such as
/// `/v1/datasets/{dataset}/schema` and runs the route's handler.
///
/// A path that matches no pattern is `404 not_found`; one that matches a pattern but not its
/// method is `405 method_not_allowed` with `Allow`. `GET` routes also answer `HEAD`.
///
/// A route may also check a request's head before its body is read (``refusal(for:)``), so a
/// request that is going to fail anyway is answered without the server receiving its body.
package struct Router: Sendable {
    /// Values of a matched pattern's `{parameters}`.
    package typealias Parameters = [String: String]
    package typealias Handler = @Sendable (HTTPRequest, Parameters) throws -> HTTPResponse
    /// Throws the error a request would get, judged from its head alone (e.g. its credentials).
    package typealias Admission = @Sendable (HTTPRequestHead, Parameters) throws -> Void

    struct Route: Sendable {
        let method: HTTPMethod
        let pattern: String
        let segments: [Segment]
        let admission: Admission?
        let handler: Handler
    }

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    /// The outcome of matching.
    package enum Match {
        case found(pattern: String, parameters: Parameters, handler: Handler, admission: Admission?)
        case methodNotAllowed(pattern: String, allowed: [HTTPMethod])
        case notFound
    }

    private var routes: [Route] = []

    package init() {}

    /// Adds a route; `pattern` segments written `{name}` match any one non-empty segment.
    /// `admission`, if given, runs before the body of a request with one is read; the handler must
    /// still make the same checks, because requests without a body skip it.
    package mutating func add(
        _ method: HTTPMethod, _ pattern: String, admission: Admission? = nil, _ handler: @escaping Handler
    ) {
        var pattern = pattern
        let parts = pattern.withUTF8 { bytes in
            Router.segmentRanges(bytes).map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
        }
        let segments = parts.map { segment -> Segment in
            if segment.hasPrefix("{") && segment.hasSuffix("}") { return .parameter(String(segment.dropFirst().dropLast())) }
            return .literal(segment)
        }
        routes.append(Route(method: method, pattern: pattern, segments: segments, admission: admission, handler: handler))
    }

    /// The route for `method` and `path`.
    package func match(method: HTTPMethod, path: String) -> Match {
        var path = path
        return path.withUTF8 { bytes in
            let ranges = Router.segmentRanges(bytes)
            var allowed: [HTTPMethod] = []
            var matchedPattern: String?
            for route in routes where Router.matches(route.segments, bytes, ranges) {
                if route.method == method || (method == .head && route.method == .get) {
                    // Parameters are bound only for the route that runs.
                    return .found(
                        pattern: route.pattern, parameters: Router.bind(route.segments, bytes, ranges),
                        handler: route.handler, admission: route.admission)
                }
                matchedPattern = matchedPattern ?? route.pattern
                if !allowed.contains(route.method) { allowed.append(route.method) }
                if route.method == .get && !allowed.contains(.head) { allowed.append(.head) }
            }
            if let matchedPattern { return .methodNotAllowed(pattern: matchedPattern, allowed: allowed) }
            return .notFound
        }
    }

    /// The pattern `path` matches with any method (for metrics labels), or `nil`.
    package func pattern(for path: String) -> String? {
        var path = path
        return path.withUTF8 { bytes in
            let ranges = Router.segmentRanges(bytes)
            return routes.first { Router.matches($0.segments, bytes, ranges) }?.pattern
        }
    }

    /// Runs the matching route; errors it throws become their JSON error responses.
    package func handle(_ request: HTTPRequest) -> HTTPResponse {
        let match = match(method: request.method, path: request.path)
        guard case .found(_, let parameters, let handler, _) = match else {
            return Router.unroutedResponse(match, method: request.method, path: request.path)
        }
        do {
            return try handler(request, parameters)
        } catch {
            return APIError.from(error).response
        }
    }

    /// The error response for a request whose head alone shows it will fail (no route, a method
    /// the path does not allow, or the route's admission check throws), or `nil` when its body
    /// should be read.
    package func refusal(for head: HTTPRequestHead) -> HTTPResponse? {
        let match = match(method: head.method, path: head.path)
        guard case .found(_, let parameters, _, let admission) = match else {
            return Router.unroutedResponse(match, method: head.method, path: head.path)
        }
        do {
            try admission?(head, parameters)
            return nil
        } catch {
            return APIError.from(error).response
        }
    }

    /// `405` or `404` for a match that found no route to run.
    private static func unroutedResponse(_ match: Match, method: HTTPMethod, path: String) -> HTTPResponse {
        if case .methodNotAllowed(_, let allowed) = match {
            return APIError.methodNotAllowed(method, allowed: allowed).response
        }
        return APIError.notFound(path).response
    }

    /// The byte ranges of `path`'s segments: after the leading `/`, cut at every `/`, keeping
    /// empty segments (`//`, a trailing `/`) so they never match a pattern by accident; a path
    /// without the leading `/` is one segment. Works on bytes because it runs for every route on
    /// every request, twice (routing and the metrics label).
    private static func segmentRanges(_ bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        guard bytes.first == UInt8(ascii: "/") else { return [0..<bytes.count] }
        var ranges: [Range<Int>] = []
        var start = 1
        while true {
            var end = start
            while end < bytes.count && bytes[end] != UInt8(ascii: "/") { end += 1 }
            ranges.append(start..<end)
            if end == bytes.count { return ranges }
            start = end + 1
        }
    }

    /// Whether a path (`bytes`, cut at `ranges`) has exactly the segments `segments` asks for.
    private static func matches(_ segments: [Segment], _ bytes: UnsafeBufferPointer<UInt8>, _ ranges: [Range<Int>]) -> Bool {
        guard ranges.count == segments.count else { return false }
        for (segment, range) in zip(segments, ranges) {
            switch segment {
            case .literal(let literal):
                var literal = literal
                guard literal.withUTF8({ $0.elementsEqual(bytes[range]) }) else { return false }
            case .parameter:
                guard !range.isEmpty else { return false }
            }
        }
        return true
    }

    /// The parameter values of a path that ``matches(_:_:_:)`` `segments`.
    private static func bind(_ segments: [Segment], _ bytes: UnsafeBufferPointer<UInt8>, _ ranges: [Range<Int>]) -> Parameters {
        var parameters: Parameters = [:]
        for (segment, range) in zip(segments, ranges) {
            if case .parameter(let name) = segment {
                parameters[name] = String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
            }
        }
        return parameters
    }
}
