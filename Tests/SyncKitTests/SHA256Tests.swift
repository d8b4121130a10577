import Codecs
import Foundation
import Testing

/// SHA-256 against the FIPS 180-2 / NIST example vectors, and hashed in parts or from any kind of
/// byte collection with the same digest as in one piece.
@Suite struct SHA256Tests {
    static func hex(_ bytes: [UInt8]) -> String { LowercaseHex.encode(bytes) }

    @Test func nistVectors() {
        #expect(Self.hex(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        // 56 bytes: the padding needs a second block.
        #expect(Self.hex(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(Self.hex(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(Self.hex(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func partsOfAnySizeHashLikeTheWhole() {
        let message = (0..<1_000).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let whole = SHA256.hash(message)
        for split in [0, 1, 55, 63, 64, 65, 127, 128, 500, 999, 1_000] {
            var hasher = SHA256()
            hasher.update(message[..<split])
            hasher.update(message[split...])
            #expect(hasher.finish() == whole, "split at \(split)")
        }
        var byteByByte = SHA256()
        for byte in message { byteByByte.update([byte]) }
        #expect(byteByByte.finish() == whole)
    }

    @Test func everyKindOfByteCollectionHashesAlike() {
        let message = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let whole = SHA256.hash(message)
        #expect(SHA256.hash(Data(message)) == whole)
        // Not contiguous: copied, then hashed.
        #expect(SHA256.hash(message.lazy.map { $0 }) == whole)
        var buffered = SHA256()
        message.withUnsafeBytes { buffered.update($0) }
        #expect(buffered.finish() == whole)
    }
}
