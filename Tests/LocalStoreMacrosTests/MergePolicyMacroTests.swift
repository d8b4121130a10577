import SwiftSyntaxMacrosTestSupport
import XCTest

/// `@Attribute(merge:)`: a policy the property's type cannot have is reported naming the macro,
/// with fix-its (`ResolutionTableMergePolicyTests` checks that policies reach the schema).
final class MergePolicyMacroTests: XCTestCase {
    func testCounterOnTextOffersIntOrNoPolicy() {
        assertPolicyDiagnostic(
            #"@Attribute(merge: .counter) var likes: String = """#,
            expandedMembers: TestMacros.attributeMembers("likes", type: "String", initialValue: "\"\""),
            message: "@Attribute(merge: .counter) needs a non-optional integer type (Int, Int64, Int32, Int16, Int8) with default storage; 'likes' is 'String'",
            column: 23, fixIts: ["Use 'Int'", "Remove the merge policy"], applying: "Use 'Int'",
            fixed: #"@Attribute(merge: .counter) var likes: Int = """#)
    }

    func testMaxOnBoolOffersNoPolicy() {
        assertPolicyDiagnostic(
            "@Attribute(.indexed, merge: .max) var pinned: Bool = false",
            expandedMembers: TestMacros.attributeMembers("pinned", type: "Bool", initialValue: "false"),
            message: "@Attribute(merge: .max) needs a type whose stored values order like its values (numbers, strings, dates); 'pinned' is 'Bool'",
            column: 33, fixIts: ["Remove the merge policy"],
            fixed: "@Attribute(.indexed) var pinned: Bool = false")
    }

    func testCustomMergeOfAnotherTypeOffersThePropertysType() {
        assertPolicyDiagnostic(
            "@Attribute(storage: .codable, merge: .custom(TagSet.self)) var tags: Labels = Labels()",
            expandedMembers: TestMacros.attributeMembers("tags", type: "Labels", initialValue: "Labels()"),
            message: "@Attribute(merge: .custom(TagSet.self)) must name the property's own type; 'tags' is 'Labels'",
            column: 42, fixIts: ["Use '.custom(Labels.self)'"],
            fixed: "@Attribute(storage: .codable, merge: .custom(Labels.self)) var tags: Labels = Labels()")
    }

    /// Expands `declaration` as the one member of a class and expects one diagnostic on line 2.
    private func assertPolicyDiagnostic(
        _ declaration: String, expandedMembers: String, message: String, column: Int, fixIts: [String], applying fixIt: String? = nil,
        fixed: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        assertMacroExpansion(
            "final class Post {\n    \(declaration)\n}",
            expandedSource: "final class Post {\n    \(expandedMembers)\n}",
            diagnostics: [DiagnosticSpec(message: message, line: 2, column: column, fixIts: fixIts.map { FixItSpec(message: $0) })],
            macroSpecs: TestMacros.specs,
            applyFixIts: fixIt.map { [$0] },
            fixedSource: "final class Post {\n    \(fixed)\n}",
            file: file, line: line)
    }
}
