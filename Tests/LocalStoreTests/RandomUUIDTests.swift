import Codecs
import Foundation
import LocalStore
@testable import LocalStoreCore
import Testing

/// New objects' identifiers: version 4, RFC variant, and not repeating.
struct RandomUUIDTests {
    @Test func identifiersAreVersion4WithTheRFCVariant() {
        for _ in 0..<1_000 {
            let id = UUID.random()
            #expect(id.uuid.6 >> 4 == 4, "\(id)")
            #expect(id.uuid.8 >> 6 == 0b10, "\(id)")
            // The text form shows it as Foundation's identifiers do: xxxxxxxx-xxxx-4xxx-[89AB]xxx-…
            let text = Array(id.storageText)
            #expect(text[14] == "4" && "89AB".contains(text[19]), "\(id)")
        }
    }

    @Test func identifiersDoNotRepeatAndUseEveryOtherBit() {
        let ids = (0..<10_000).map { _ in UUID.random() }
        #expect(Set(ids).count == ids.count)
        // Every bit outside the version and variant is 1 in some identifier and 0 in another.
        var ones = [UInt8](repeating: 0, count: 16), zeros = [UInt8](repeating: 0, count: 16)
        for id in ids {
            withUnsafeBytes(of: id.uuid) { bytes in
                for index in 0..<16 {
                    ones[index] |= bytes[index]
                    zeros[index] |= ~bytes[index]
                }
            }
        }
        var fixed: [UInt8] = Array(repeating: 0, count: 16)
        fixed[6] = 0xF0
        fixed[8] = 0xC0
        for index in 0..<16 {
            #expect(ones[index] & zeros[index] | fixed[index] == 0xFF, "byte \(index)")
        }
    }

    @Test func newObjectsGetSuchIdentifiers() {
        let state = EntityState()
        #expect(state.objectID.uuid.6 >> 4 == 4)
        #expect(state.objectID == state.objectID)
    }
}
