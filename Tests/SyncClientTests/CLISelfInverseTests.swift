import Foundation
import SyncKit
import Testing

/// People whose relationships are their own inverse, for the CLI's link and unlink.
@Entity final class Acquaintance {
    var name: String = ""
    @Relationship(inverse: "spouse", deleteRule: .nullify) var spouse: Acquaintance?
    @Relationship(inverse: "friends", deleteRule: .nullify) var friends: Set<Acquaintance> = []
}

/// `sync link` and `sync unlink` through a self-inverse relationship, on a real store file.
extension CLIStoreTests {
    @Test func linkAndUnlinkFromEitherEndShowOnBothEnds() throws {
        let (path, run) = try initializedStore("people", entities: [Acquaintance.self])
        func object(_ id: String) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(try run("get", "Acquaintance", id).utf8)) as? [String: Any])
        }
        let x = try run("put", "Acquaintance", "name=x"), y = try run("put", "Acquaintance", "name=y"), z = try run("put", "Acquaintance", "name=z")

        _ = try run("link", "Acquaintance", y, "spouse", x)
        #expect(try object(x)["spouse"] as? String == y)
        #expect(try object(y)["spouse"] as? String == x)
        _ = try run("link", "Acquaintance", z, "friends", x)
        _ = try run("link", "Acquaintance", x, "friends", y)
        #expect(Set(try object(x)["friends"] as? [String] ?? []) == [y, z])
        #expect(try object(z)["friends"] as? [String] == [x])

        _ = try run("unlink", "Acquaintance", x, "friends", z)
        #expect(try object(z)["friends"] as? [String] == [])
        #expect(try object(x)["friends"] as? [String] == [y])
        // z takes y as spouse: x is left without one.
        _ = try run("link", "Acquaintance", z, "spouse", y)
        #expect(try object(x)["spouse"] is NSNull)
        #expect(try object(z)["spouse"] as? String == y)
        _ = try run("unlink", "Acquaintance", y, "spouse", z)
        #expect(try object(z)["spouse"] is NSNull)
        #expect(try cli.run("--store", path, "unlink", "Acquaintance", y, "spouse", z).status == 1)
        #expect(try run("log").split(separator: "\n").count == 9)
    }
}
