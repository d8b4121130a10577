@testable import LocalStoreMacros
import SwiftDiagnostics
import XCTest

/// The messages themselves: every one names its macro and has a stable, distinct id; all are
/// errors except the warning about a deprecated spelling.
final class DiagnosticMessageTests: XCTestCase {
    private let all: [LocalStoreDiagnostic] = [
        .entityNotClass(kind: "struct"), .entityNotFinal(name: "P"), .notStoredProperty(macro: "@Attribute"),
        .multipleBindings(macro: "@Entity"), .letProperty(macro: "@Entity", name: "p"),
        .missingTypeAnnotation(macro: "@Attribute", name: "p"), .missingDefaultValue(macro: "@Transient", name: "p"),
        .propertyObservers(name: "p"), .lazyProperty(name: "p"), .toOneNotOptional(name: "p"),
        .optionalToMany(name: "p"), .unsupportedRelationshipType(name: "p"), .missingInverse(name: "p"),
        .missingDeleteRule(name: "p"), .noActionDeleteRule(name: "p"), .toManyMissingDefault(name: "p"),
        .conflictingMacros(name: "p"), .compositionNotStruct(kind: "enum"),
        .entitySuperclass(name: "P", superclass: "Base"), .noDefaultStorage(macro: "@Entity", name: "p", type: "[T]"),
        .deprecatedSpelling(macro: "@Transient", old: "@Ignore", new: "@Transient"), .nilPolicyOnNonOptional(name: "p"),
    ]

    func testEveryMessageNamesAMacroAndOnlyDeprecationsAreWarnings() {
        let macros = ["@Entity", "@Attribute", "@Relationship", "@Transient", "@Composition"]
        for diagnostic in all {
            let isDeprecation = if case .deprecatedSpelling = diagnostic { true } else { false }
            XCTAssertEqual(diagnostic.severity, isDeprecation ? .warning : .error, diagnostic.message)
            XCTAssertTrue(macros.contains { diagnostic.message.hasPrefix($0) }, diagnostic.message)
        }
    }

    func testIDsAreDistinctAndInTheLocalStoreDomain() {
        let ids = all.map(\.diagnosticID)
        XCTAssertEqual(Set(ids).count, all.count)
        XCTAssertEqual(LocalStoreDiagnostic.noActionDeleteRule(name: "x").diagnosticID,
                       MessageID(domain: "LocalStoreMacros", id: "noActionDeleteRule"))
    }
}
