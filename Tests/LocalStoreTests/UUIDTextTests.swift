import Codecs
import Foundation
import LocalStore
@testable import LocalStoreCore
import TestSupport
import Testing

/// The hand-written identifier text must be exactly Foundation's, both ways, and sort the same.
struct UUIDTextTests {
    /// Deterministic identifiers covering every hex digit in every position.
    static let samples: [UUID] = {
        var generator = SeededGenerator(seed: 0x5EED)
        var result = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                      UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))]
        for _ in 0..<500 {
            let high = generator.next(), low = generator.next()
            let bytes = withUnsafeBytes(of: (high, low)) { Array($0) }
            result.append(UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                      bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])))
        }
        return result
    }()

    @Test func textIsFoundationsUUIDString() {
        for id in UUIDTextTests.samples {
            #expect(id.storageText == id.uuidString)
        }
    }

    @Test func parsingMatchesFoundationInBothCases() {
        for id in UUIDTextTests.samples {
            #expect(UUID(storageText: id.uuidString) == id)
            #expect(UUID(storageText: id.uuidString.lowercased()) == id)
        }
    }

    @Test(arguments: [
        "", "not a uuid", "E621E1F8-C36C-495A-93FC-0C247A3E6E5", "E621E1F8-C36C-495A-93FC-0C247A3E6E5FF",
        "E621E1F8C36C-495A-93FC-0C247A3E6E5F0", "E621E1F8-C36C-495A-93FC-0C247A3E6E5G", "{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}",
        "E621E1F8-C36C-495A-93FC+0C247A3E6E5F",
    ])
    func rejectsWhatFoundationRejects(text: String) {
        #expect(UUID(storageText: text) == nil)
        #expect(UUID(uuidString: text) == nil)
    }

    @Test func everyByteReadsAsItsHexValueOrAsNoDigit() {
        for byte in UInt8.min...UInt8.max {
            let expected: UInt8? = switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
            let value = UUIDText.hexValue(byte)
            if let expected {
                #expect(value == expected, "byte \(byte)")
            } else {
                #expect(value == 0xFF, "byte \(byte) is no hex digit")
            }
        }
    }

    @Test func everyValueWritesAsItsHexDigitInBothCases() {
        let upper = Array("0123456789ABCDEF".utf8), lower = Array("0123456789abcdef".utf8)
        for value in UInt8(0)...15 {
            #expect(HexDigit.uppercase(value) == upper[Int(value)], "value \(value)")
            #expect(HexDigit.lowercase(value) == lower[Int(value)], "value \(value)")
        }
    }

    @Test func orderIsTheTextOrder() {
        let samples = UUIDTextTests.samples
        for (left, right) in zip(samples, samples.dropFirst() + [samples[0]]) {
            #expect(left.precedesInStorageOrder(right) == (left.uuidString < right.uuidString))
            #expect(right.precedesInStorageOrder(left) == (right.uuidString < left.uuidString))
        }
        #expect(!samples[5].precedesInStorageOrder(samples[5]))
    }
}
