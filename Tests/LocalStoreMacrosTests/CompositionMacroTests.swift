import SwiftSyntaxMacrosTestSupport
import XCTest

/// Expansions of `@Composition`: the field table in declaration order.
final class CompositionMacroTests: XCTestCase {
    func testCompositionListsFieldsInOrder() {
        assertMacroExpansion(
            #"""
            @Composition struct GeoPoint {
                var latitude: Double = 0
                var longitude: Double = 0
            }
            """#,
            expandedSource: #"""
            struct GeoPoint {
                var latitude: Double = 0
                var longitude: Double = 0
            }

            extension GeoPoint: LocalStore.CompositionValue {
                static let _$compositionFields: [LocalStore.CompositionField<GeoPoint>] = [
                    LocalStore.CompositionField("latitude", \GeoPoint.latitude),
                    LocalStore.CompositionField("longitude", \GeoPoint.longitude),
                ]
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testCompositionSkipsStaticAndComputedAndAllowsOptionals() {
        assertMacroExpansion(
            #"""
            @Composition public struct Span {
                static let zero = Span()
                var start: Int = 0
                var end: Int?
                var length: Int { (end ?? start) - start }
            }
            """#,
            expandedSource: #"""
            public struct Span {
                static let zero = Span()
                var start: Int = 0
                var end: Int?
                var length: Int { (end ?? start) - start }
            }

            extension Span: LocalStore.CompositionValue {
                public static let _$compositionFields: [LocalStore.CompositionField<Span>] = [
                    LocalStore.CompositionField("start", \Span.start),
                    LocalStore.CompositionField("end", \Span.end),
                ]
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }

    func testNestedCompositionIsExtendedByQualifiedName() {
        assertMacroExpansion(
            #"""
            enum Geo {
                @Composition struct Point {
                    var x: Double = 0
                }
            }
            """#,
            expandedSource: #"""
            enum Geo {
                struct Point {
                    var x: Double = 0
                }
            }

            extension Geo.Point: LocalStore.CompositionValue {
                static let _$compositionFields: [LocalStore.CompositionField<Geo.Point>] = [
                    LocalStore.CompositionField("x", \Geo.Point.x),
                ]
            }
            """#,
            macroSpecs: TestMacros.specs
        )
    }
}
