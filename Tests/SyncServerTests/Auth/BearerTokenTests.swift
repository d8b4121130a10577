import Foundation
import Testing

@testable import SyncServer

/// The `Authorization` header is parsed byte by byte; these pin down the shapes it accepts.
@Suite struct BearerTokenTests {
    @Test func schemeIsCaseInsensitiveAndSpacesAroundTheTokenAreDropped() {
        #expect(RouteContext.bearerToken(in: "Bearer abc") == "abc")
        #expect(RouteContext.bearerToken(in: "bEARER abc") == "abc")
        #expect(RouteContext.bearerToken(in: "  Bearer   abc \t") == "abc")
        #expect(RouteContext.bearerToken(in: "Bearer a b") == "a b")
        #expect(RouteContext.bearerToken(in: "Bearer ümlaut") == "ümlaut")
        // Present but blank: the caller refuses it as an invalid token.
        #expect(RouteContext.bearerToken(in: "Bearer   ") == "")
    }

    @Test func otherShapesAreRefused() {
        for header in ["", "Bearer", "Bearer ", "Bearerabc", "Bearer\tabc", "Basic abc", "Bearerx abc", "   "] {
            #expect(RouteContext.bearerToken(in: header) == nil, "\(header)")
        }
    }
}
