import SwiftSyntaxMacrosTestSupport
import XCTest

/// `@Attribute(merge:)`: a policy the property's type cannot have is reported naming the macro,
/// with fix-its (`ResolutionTableMergePolicyTests` checks that policies reach the schema).
final class MergePolicyMacroTests: XCTestCase {
    func testCounterOnTextOffersIntOrNoPolicy() {
        assertMacroExpansion(
            #"""
            final class Post {
                @Attribute(merge: .counter) var likes: String = ""
            }
            """#,
            expandedSource: #"""
            final class Post {
                \#(TestMacros.attributeMembers("likes", type: "String", initialValue: "\"\""))
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Attribute(merge: .counter) needs a non-optional integer type (Int, Int64, Int32, Int16, Int8) with default storage; 'likes' is 'String'",
                    line: 2, column: 23, fixIts: [FixItSpec(message: "Use 'Int'"), FixItSpec(message: "Remove the merge policy")]),
            ],
            macroSpecs: TestMacros.specs,
            applyFixIts: ["Use 'Int'"],
            fixedSource: #"""
            final class Post {
                @Attribute(merge: .counter) var likes: Int = ""
            }
            """#
        )
    }

    func testMaxOnBoolOffersNoPolicy() {
        assertMacroExpansion(
            #"""
            final class Post {
                @Attribute(.indexed, merge: .max) var pinned: Bool = false
            }
            """#,
            expandedSource: #"""
            final class Post {
                \#(TestMacros.attributeMembers("pinned", type: "Bool", initialValue: "false"))
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Attribute(merge: .max) needs a type whose stored values order like its values (numbers, strings, dates); 'pinned' is 'Bool'",
                    line: 2, column: 33, fixIts: [FixItSpec(message: "Remove the merge policy")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            final class Post {
                @Attribute(.indexed) var pinned: Bool = false
            }
            """#
        )
    }

    func testCustomMergeOfAnotherTypeOffersThePropertysType() {
        assertMacroExpansion(
            #"""
            final class Post {
                @Attribute(storage: .codable, merge: .custom(TagSet.self)) var tags: Labels = Labels()
            }
            """#,
            expandedSource: #"""
            final class Post {
                \#(TestMacros.attributeMembers("tags", type: "Labels", initialValue: "Labels()"))
            }
            """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Attribute(merge: .custom(TagSet.self)) must name the property's own type; 'tags' is 'Labels'",
                    line: 2, column: 42, fixIts: [FixItSpec(message: "Use '.custom(Labels.self)'")]),
            ],
            macroSpecs: TestMacros.specs,
            fixedSource: #"""
            final class Post {
                @Attribute(storage: .codable, merge: .custom(Labels.self)) var tags: Labels = Labels()
            }
            """#
        )
    }
}
