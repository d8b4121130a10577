/// Incrementally removes `Transfer-Encoding: chunked` framing from a request body (RFC 9112 §7.1).
///
/// Chunk extensions are syntax-checked loosely and ignored; trailer fields are validated like
/// header fields and then discarded, because handlers see only the header fields and merging
/// trailers into the headers would invite request smuggling.
struct ChunkedBodyDecoder {
    private enum Phase {
        case sizeLine
        case data(remaining: Int)
        case dataTerminator
        case trailers(byteCount: Int)
    }

    /// A chunk-size line longer than this is hostile (real extensions are short).
    private static let maxSizeLineBytes = 4096

    private let limits: HTTPRequestParser.Limits
    private var phase = Phase.sizeLine
    /// The body with framing removed.
    private(set) var decodedBody: [UInt8] = []
    /// Bytes consumed from the wire, framing included.
    private(set) var wireByteCount = 0

    init(limits: HTTPRequestParser.Limits) {
        self.limits = limits
    }

    /// Consumes as much of `buffer` from `readIndex` as possible, advancing `readIndex`.
    /// Returns `true` once the last chunk and the trailers are consumed.
    mutating func decode(_ buffer: [UInt8], readIndex: inout Int) throws(HTTPParseError) -> Bool {
        while true {
            switch phase {
            case .sizeLine:
                guard let lineEnd = buffer[readIndex...].firstIndex(of: ASCII.lineFeed) else {
                    if buffer.count - readIndex > Self.maxSizeLineBytes {
                        throw .badRequest("chunk size line too long")
                    }
                    return false
                }
                let size = try Self.parseChunkSize(buffer[readIndex..<lineEnd])
                wireByteCount += lineEnd + 1 - readIndex
                readIndex = lineEnd + 1
                if size == 0 {
                    phase = .trailers(byteCount: 0)
                } else {
                    if size > limits.maxBodyBytes - decodedBody.count {
                        throw .bodyTooLarge(limit: limits.maxBodyBytes)
                    }
                    phase = .data(remaining: size)
                }
            case .data(let remaining):
                let available = min(remaining, buffer.count - readIndex)
                guard available > 0 else { return false }
                decodedBody.append(contentsOf: buffer[readIndex..<(readIndex + available)])
                readIndex += available
                wireByteCount += available
                phase = remaining == available ? .dataTerminator : .data(remaining: remaining - available)
            case .dataTerminator:
                guard readIndex < buffer.count else { return false }
                if buffer[readIndex] == ASCII.lineFeed {
                    readIndex += 1
                    wireByteCount += 1
                } else if buffer[readIndex] == ASCII.carriageReturn {
                    guard readIndex + 1 < buffer.count else { return false }
                    guard buffer[readIndex + 1] == ASCII.lineFeed else {
                        throw .badRequest("chunk data not followed by CRLF")
                    }
                    readIndex += 2
                    wireByteCount += 2
                } else {
                    throw .badRequest("chunk data not followed by CRLF")
                }
                phase = .sizeLine
            case .trailers(let byteCount):
                guard let lineEnd = buffer[readIndex...].firstIndex(of: ASCII.lineFeed) else {
                    if byteCount + buffer.count - readIndex > limits.maxHeadBytes {
                        throw .headersTooLarge(limit: limits.maxHeadBytes)
                    }
                    return false
                }
                let lineLength = lineEnd + 1 - readIndex
                var line = buffer[readIndex..<lineEnd]
                if line.last == ASCII.carriageReturn { line.removeLast() }
                readIndex = lineEnd + 1
                wireByteCount += lineLength
                if line.isEmpty { return true }
                _ = try HTTPRequestParser.parseField(line)
                guard byteCount + lineLength <= limits.maxHeadBytes else {
                    throw .headersTooLarge(limit: limits.maxHeadBytes)
                }
                phase = .trailers(byteCount: byteCount + lineLength)
            }
        }
    }

    /// Parses `chunk-size [ chunk-ext ] [CR]`.
    static func parseChunkSize(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> Int {
        var line = line
        if line.last == ASCII.carriageReturn { line.removeLast() }
        var size = 0
        var digitCount = 0
        var index = line.startIndex
        while index < line.endIndex, let digit = ASCII.hexValue(line[index]) {
            // 15 hex digits cannot overflow Int; anything longer is hostile, not a real chunk.
            guard digitCount < 15 else { throw .badRequest("chunk size too large") }
            size = size << 4 | Int(digit)
            digitCount += 1
            index += 1
        }
        guard digitCount > 0 else { throw .badRequest("invalid chunk size") }
        let rest = line[index...]
        guard let first = rest.first else { return size }
        guard first == ASCII.semicolon || first == ASCII.space || first == ASCII.tab,
            rest.allSatisfy({ $0 == ASCII.tab || ($0 >= 0x20 && $0 != 0x7F) })
        else {
            throw .badRequest("invalid chunk size")
        }
        if first != ASCII.semicolon {
            // Only whitespace may sit between the size and an extension (BWS).
            let afterWhitespace = rest.drop { $0 == ASCII.space || $0 == ASCII.tab }
            guard afterWhitespace.isEmpty || afterWhitespace.first == ASCII.semicolon else {
                throw .badRequest("invalid chunk size")
            }
        }
        return size
    }
}
