import Codecs
import Foundation

/// Names a server log up to one of its cursors: which change sets it holds there, in which order.
///
/// A cursor alone names a position, and a server restored from a backup hands out the same
/// positions again for other change sets. A client that sends the digest it got with its cursor
/// lets the server check that its log up to that cursor is the one the client pulled.
///
/// The digest is a chain: the empty log's is 16 zero bytes, and appending an entry whose change
/// set has dot `(replica, seq)` gives the first 16 bytes of
/// `SHA-256(previous digest, replica's 16 UUID bytes, seq as 8 bytes least significant first)`.
/// On the wire it is 32 lowercase hex digits.
public struct LogDigest: Sendable, Hashable, CustomStringConvertible {
    /// The number of bytes of a digest.
    public static let byteCount = 16

    /// The digest of the empty log (cursor 0).
    public static let empty = LogDigest(validBytes: [UInt8](repeating: 0, count: byteCount))

    /// The digest's bytes.
    public let bytes: [UInt8]

    private init(validBytes: [UInt8]) {
        bytes = validBytes
    }

    /// A digest with these bytes; `nil` unless there are ``byteCount`` of them.
    public init?(bytes: [UInt8]) {
        guard bytes.count == LogDigest.byteCount else { return nil }
        self.init(validBytes: bytes)
    }

    /// The digest written as 32 hex digits; `nil` for any other text.
    public init?(hex: some StringProtocol) {
        guard let bytes = LowercaseHex.decode(hex) else { return nil }
        self.init(bytes: bytes)
    }

    /// The digest of this log with an entry for `dot` appended.
    public func appending(_ dot: Dot) -> LogDigest {
        var message = bytes
        message.reserveCapacity(LogDigest.byteCount + 24)
        withUnsafeBytes(of: dot.replica.uuid) { message.append(contentsOf: $0) }
        withUnsafeBytes(of: dot.seq.littleEndian) { message.append(contentsOf: $0) }
        return LogDigest(validBytes: Array(SHA256.hash(message).prefix(LogDigest.byteCount)))
    }

    /// The wire form: 32 lowercase hex digits.
    public var description: String { LowercaseHex.encode(bytes) }
}
