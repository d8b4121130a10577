import Codecs
import Foundation
import Testing

/// HMAC-SHA256 against the test vectors of RFC 4231 §4.
@Suite struct HMACSHA256Tests {
    static func bytes(hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    static let longKey = [UInt8](repeating: 0xaa, count: 131)

    /// Test cases 1–4, 6 and 7 (case 5 truncates the output and is checked on its own).
    static let cases: [(key: [UInt8], message: [UInt8], code: String)] = [
        ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        ([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        (bytes(hex: "0102030405060708090a0b0c0d0e0f10111213141516171819"), [UInt8](repeating: 0xcd, count: 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        (longKey, Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        (longKey, Array("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".utf8),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test(arguments: 0..<cases.count)
    func rfc4231Vector(_ index: Int) {
        let testCase = Self.cases[index]
        let expected = Self.bytes(hex: testCase.code)
        #expect(HMACSHA256.authenticationCode(key: testCase.key, message: testCase.message) == expected)
        #expect(HMACSHA256.isValid(expected, key: testCase.key, message: testCase.message))
    }

    @Test func rfc4231TruncatedVector() {
        let code = HMACSHA256.authenticationCode(key: [UInt8](repeating: 0x0c, count: 20), message: Array("Test With Truncation".utf8))
        #expect(Array(code.prefix(16)) == Self.bytes(hex: "a3b6167473100ee06e0c796c2955552b"))
    }

    @Test func aChangedMessageOrKeyOrCodeIsNotValid() {
        let key = [UInt8](repeating: 7, count: 32), message = Array("change set".utf8)
        let code = HMACSHA256.authenticationCode(key: key, message: message)
        var flipped = code
        flipped[31] ^= 1
        #expect(!HMACSHA256.isValid(flipped, key: key, message: message))
        #expect(!HMACSHA256.isValid(code, key: key, message: Array("change sat".utf8)))
        #expect(!HMACSHA256.isValid(code, key: [UInt8](repeating: 8, count: 32), message: message))
        #expect(!HMACSHA256.isValid(Array(code.prefix(16)), key: key, message: message))
    }
}
