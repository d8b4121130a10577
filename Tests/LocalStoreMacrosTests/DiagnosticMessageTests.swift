@testable import LocalStoreMacros
import SwiftDiagnostics
import XCTest

/// The messages themselves: every one is an error, names its macro and has a stable, distinct id.
final class DiagnosticMessageTests: XCTestCase {
    private let all: [LocalStoreDiagnostic] = [
        .entityNotClass(kind: "struct"), .entityNotFinal(name: "P"), .notStoredProperty(macro: "@Attribute"),
        .multipleBindings(macro: "@Entity"), .letProperty(macro: "@Entity", name: "p"),
        .missingTypeAnnotation(macro: "@Attribute", name: "p"), .missingDefaultValue(macro: "@Transient", name: "p"),
        .propertyObservers(name: "p"), .lazyProperty(name: "p"), .toOneNotOptional(name: "p"),
        .optionalToMany(name: "p"), .unsupportedRelationshipType(name: "p"), .missingInverse(name: "p"),
        .missingDeleteRule(name: "p"), .noActionDeleteRule(name: "p"), .toManyMissingDefault(name: "p"),
        .conflictingMacros(name: "p"), .compositionNotStruct(kind: "enum"),
    ]

    func testEveryMessageIsAnErrorNamingAMacro() {
        let macros = ["@Entity", "@Attribute", "@Relationship", "@Transient", "@Composition"]
        for diagnostic in all {
            XCTAssertEqual(diagnostic.severity, .error, diagnostic.message)
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
