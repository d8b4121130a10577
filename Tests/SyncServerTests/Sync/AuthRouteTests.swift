import Foundation
@testable import HTTPServer
import SyncKit
import Testing

@testable import SyncServer

@Suite struct AuthRouteTests {
    @Test(arguments: ServerStorage.allCases) func healthNeedsNoTokenAndEveryResponseNamesTheProtocol(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        let response = server.send(.get, "/health", token: nil)
        #expect(response.status == .ok)
        #expect(response.json["status"] as? String == "ok")
        #expect(response.headers["Sync-Protocol"] == "1")
        #expect(server.send(.get, "/nowhere", token: nil).headers["Sync-Protocol"] == "1")
    }

    @Test(arguments: ServerStorage.allCases) func missingOrMalformedOrUnknownTokenIs401WithChallenge(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        for token in [nil, "", "not-a-token", String(repeating: "0", count: 64)] as [String?] {
            let response = server.send(.get, "/v1/datasets/main/schema", token: token)
            #expect(response.status == .unauthorized)
            #expect(response.errorCode == "unauthorized")
            #expect(response.headers["WWW-Authenticate"] == "Bearer")
        }
        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: "Basic \(server.token)")
        let basic = server.service.handle(HTTPRequest(method: .get, target: "/v1/datasets/main/schema", path: "/v1/datasets/main/schema", headers: headers))
        #expect(basic.status == .unauthorized)
    }

    @Test(arguments: ServerStorage.allCases) func tokenOfAnotherDatasetIs403(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        let response = server.send(.get, "/v1/datasets/main/schema", token: server.otherToken)
        #expect(response.status == .forbidden)
        #expect(response.errorCode == "forbidden")
        #expect(server.send(.get, "/v1/datasets/unknown/changesets").status == .forbidden)
    }

    @Test(arguments: ServerStorage.allCases) func invalidDatasetNameIs400(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        for name in [".hidden", String(repeating: "a", count: 65), "a b", "ümlaut", "a%2Fb"] {
            let response = server.send(.get, "/v1/datasets/\(name)/schema")
            #expect(response.status == .badRequest, "\(name)")
            #expect(response.errorCode == "invalid_dataset", "\(name)")
        }
        #expect(DatasetRegistry.isValidName("Team-1.data_x"))
        #expect(!DatasetRegistry.isValidName(""))
    }

    @Test(arguments: ServerStorage.allCases) func unknownRouteIs404AndWrongMethodIs405WithAllow(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        let missing = server.send(.get, "/v1/datasets/main/nothing")
        #expect(missing.status == .notFound)
        #expect(missing.errorCode == "not_found")
        let wrong = server.send(.delete, "/v1/datasets/main/changesets")
        #expect(wrong.status == .methodNotAllowed)
        #expect(wrong.errorCode == "method_not_allowed")
        #expect(wrong.headers["Allow"] == "POST, GET, HEAD")
        #expect(server.send(.post, "/health", token: nil).headers["Allow"] == "GET, HEAD")
        #expect(server.send(.head, "/health", token: nil).status == .ok)
    }

    @Test(arguments: ServerStorage.allCases) func tokensAreStoredOnlyAsHashesAndCanBeRevoked(storage: ServerStorage) throws {
        let server = try ServerFixture(storage: storage)
        let entries = try server.service.tokens.list()
        #expect(entries.count == 2)
        #expect(entries.allSatisfy { $0.hash.count == 64 && $0.hash != server.token && $0.hash != server.otherToken })
        #expect(server.token.count == 64 && server.token.allSatisfy(\.isHexDigit))
        let hash = TokenStore.hash(server.token)
        #expect(try server.service.tokens.revoke(hashPrefix: String(hash.prefix(12))) == 1)
        #expect(server.send(.get, "/v1/datasets/main/schema").status == .unauthorized)
    }
}
