import Foundation
@testable import HTTPServer
import Testing

@testable import SyncServer

/// The router matches paths byte by byte in place; these pin down the segment rules it must keep.
@Suite struct RouterTests {
    static let router: Router = {
        var router = Router()
        for (method, pattern) in [(HTTPMethod.get, "/health"), (.post, "/v1/datasets/{dataset}/changesets"),
                                  (.get, "/v1/datasets/{dataset}/changesets"), (.put, "/v1/datasets/{dataset}/schema"),
                                  (.get, "/v1/{a}/{b}")] {
            router.add(method, pattern) { _, parameters in
                .text(parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))
            }
        }
        return router
    }()

    func found(_ method: HTTPMethod, _ path: String) -> (pattern: String, parameters: Router.Parameters)? {
        if case .found(let pattern, let parameters, _, _) = RouterTests.router.match(method: method, path: path) { return (pattern, parameters) }
        return nil
    }

    @Test func literalAndParameterSegmentsMatchExactly() {
        #expect(found(.get, "/health")?.pattern == "/health")
        #expect(found(.head, "/health")?.pattern == "/health")
        let pull = found(.get, "/v1/datasets/team-1.x/changesets")
        #expect(pull?.pattern == "/v1/datasets/{dataset}/changesets")
        #expect(pull?.parameters == ["dataset": "team-1.x"])
        #expect(found(.get, "/v1/datasets/ümlaut/changesets")?.parameters == ["dataset": "ümlaut"])
        #expect(found(.get, "/v1/x/y")?.parameters == ["a": "x", "b": "y"])
    }

    @Test func emptySegmentsAndTrailingSlashesNeverMatch() {
        for path in ["/health/", "//health", "", "/", "/v1/datasets//changesets", "/v1/datasets/x/changesets/",
                     "/v1/datasets", "/v1/datasets/x/changesets/more", "/HEALTH", "/healthy", "/v1//y", "/v1/x/"] {
            #expect(found(.get, path) == nil, "\(path)")
            #expect(RouterTests.router.pattern(for: path) == nil, "\(path)")
        }
    }

    @Test func wrongMethodListsTheAllowedOnesAndPatternIgnoresTheMethod() {
        guard case .methodNotAllowed(let pattern, let allowed) = RouterTests.router.match(method: .delete, path: "/v1/datasets/x/changesets") else {
            Issue.record("expected 405")
            return
        }
        #expect(pattern == "/v1/datasets/{dataset}/changesets")
        #expect(allowed == [.post, .get, .head])
        #expect(RouterTests.router.pattern(for: "/v1/datasets/x/schema") == "/v1/datasets/{dataset}/schema")
        #expect(RouterTests.router.pattern(for: "/v1/datasets/x/changesets") == "/v1/datasets/{dataset}/changesets")
        if case .notFound = RouterTests.router.match(method: .get, path: "/nowhere") {} else { Issue.record("expected 404") }
    }
}
