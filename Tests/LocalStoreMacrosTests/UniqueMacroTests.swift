import SwiftSyntaxMacrosTestSupport
import XCTest

/// Expansions and diagnostics of `#Unique`, alone and as `@Entity` reads it.
final class UniqueMacroTests: XCTestCase {
    func testExpandsToTheKeysPropertyNames() {
        assertMacroExpansion(
            #"""
            final class Player {
                #Unique<Player>([\.first, \.last], [\Player.email])
            }
            """#,
            expandedSource: #"""
            final class Player {
                static let _$uniquenessConstraints: [[String]] = [["first", "last"], ["email"]]
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testEntityPassesTheKeysToItsSchema() {
        assertMacroExpansion(
            #"""
            @Entity final class Player {
                #Unique<Player>([\.first, \.last])
                var first: String = ""
                var last: String = ""
            }
            """#,
            expandedSource: #"""
            final class Player {
                static let _$uniquenessConstraints: [[String]] = [["first", "last"]]
                \#(TestMacros.attributeMembers("first", type: "String", initialValue: "\"\""))
                \#(TestMacros.attributeMembers("last", type: "String", initialValue: "\"\""))

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Player: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Player.self, name: "Player", uniquenessConstraints: Player._$uniquenessConstraints, properties: [
                    .attribute("first", keyPath: \Player.first, get: { $0._first }, set: { $0._first = $1 }),
                    .attribute("last", keyPath: \Player.last, get: { $0._last }, set: { $0._last = $1 }),
                ])
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testARelationshipInAKeyIsReportedWithARemovalFixIt() {
        assertMacroExpansion(
            #"""
            @Entity final class Player {
                #Unique<Player>([\.first, \.team])
                var first: String = ""
                @Relationship(inverse: "players", deleteRule: .nullify) var team: Team?
            }
            """#,
            expandedSource: #"""
            final class Player {
                static let _$uniquenessConstraints: [[String]] = [["first", "team"]]
                \#(TestMacros.attributeMembers("first", type: "String", initialValue: "\"\""))
                var team: Team? {
                    @storageRestrictions(initializes: _team)
                    init(initialValue) {
                        _team = initialValue
                    }
                    get {
                        LocalStore._$access(self, \.team)
                        LocalStore._$willReadRelationship(self, "team")
                        return _team
                    }
                    set {
                        LocalStore._$setRelationship(self, "team", to: newValue)
                    }
                }

                private var _team: Team? = nil

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Player: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Player.self, name: "Player", properties: [
                    .attribute("first", keyPath: \Player.first, get: { $0._first }, set: { $0._first = $1 }),
                    .relationship("team", keyPath: \Player.team, get: { $0._team }, set: { $0._team = $1 }, inverse: "players", deleteRule: .nullify),
                ])
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "#Unique cannot use relationship 'team'; keys are made of stored attributes", line: 2, column: 31,
                               fixIts: [FixItSpec(message: "Remove '\\.team' from the key")]),
            ],
            macroSpecs: TestMacros.specs,
            applyFixIts: ["Remove '\\.team' from the key"],
            fixedSource: #"""
            @Entity final class Player {
                #Unique<Player>([\.first])
                var first: String = ""
                @Relationship(inverse: "players", deleteRule: .nullify) var team: Team?
            }
            """#
        )
    }

    func testATransientPropertyInAKeyIsReported() {
        assertMacroExpansion(
            #"""
            @Entity final class Player {
                #Unique<Player>([\.cache])
                @Transient var cache: Int = 0
            }
            """#,
            expandedSource: #"""
            final class Player {
                static let _$uniquenessConstraints: [[String]] = [["cache"]]
                var cache: Int = 0

                let _$entityState = LocalStore.EntityState()

                init(_$materializing _: LocalStore.MaterializingToken) {}

                init() {}
            }

            extension Player: LocalStore.PersistentEntity {
                static let _$entity = LocalStore.EntityDescription(Player.self, name: "Player", properties: [])
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "#Unique names 'cache', which is not a stored attribute of Player (transient, computed or static)", line: 2, column: 22),
            ],
            macroSpecs: TestMacros.specs
        )
    }

    func testANestedKeyPathIsReportedWithAFixItKeepingItsFirstProperty() {
        assertMacroExpansion(
            #"""
            final class Player {
                #Unique<Player>([\.address.city])
            }
            """#,
            expandedSource: #"""
            final class Player {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "#Unique key path '\\.address.city' must name one stored property of the entity itself", line: 2, column: 22,
                               fixIts: [FixItSpec(message: "Use '\\.address'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            final class Player {
                #Unique<Player>([\.address])
            }
            """#
        )
    }

    func testShapeProblemsAreReported() {
        assertMacroExpansion(
            #"""
            final class Player {
                #Unique<Player>([], keys, [\.first, \.first])
            }
            """#,
            expandedSource: #"""
            final class Player {
            }
            """#,
            diagnostics: [
                DiagnosticSpec(message: "#Unique key is empty; list the properties whose values together must be unique", line: 2, column: 21),
                DiagnosticSpec(message: "#Unique takes each key as an array literal of key paths, e.g. [\\.first, \\.last]", line: 2, column: 25),
                DiagnosticSpec(message: "#Unique key lists 'first' twice", line: 2, column: 41,
                               fixIts: [FixItSpec(message: "Remove '\\.first' from the key")]),
            ],
            macroSpecs: TestMacros.specs
        )
    }

    func testOutsideAClassIsReported() {
        assertMacroExpansion(
            #"""
            #Unique<Player>([\.first])
            """#,
            expandedSource: "",
            diagnostics: [
                DiagnosticSpec(message: "#Unique must be written inside the body of an @Entity class", line: 1, column: 1),
            ],
            macroSpecs: TestMacros.specs
        )
    }
}
