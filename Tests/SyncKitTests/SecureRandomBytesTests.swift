@testable import Codecs
import Testing

@Suite struct SecureRandomBytesTests {
    @Test(arguments: [0, 1, 7, 8, 9, 32, 33])
    func everyCountIsMadeExactly(count: Int) {
        #expect(SecureRandomBytes.make(count: count).count == count)
    }

    @Test func drawsDifferAndUseEveryByteOfAWord() {
        let first = SecureRandomBytes.make(count: 32)
        let second = SecureRandomBytes.make(count: 32)
        #expect(first != second)
        // A generator that only filled the low byte of each draw would leave bytes 1...7 zero.
        let draws = (0..<64).map { _ in SecureRandomBytes.make(count: 8) }
        for position in 1..<8 {
            #expect(draws.contains { $0[position] != 0 }, "byte \(position) of every 8-byte draw was zero")
        }
    }
}
