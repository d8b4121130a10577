import Foundation

/// An incremental HTTP/1.1 request parser for one connection.
///
/// Bytes are appended as they arrive; ``nextRequest()`` returns a request only once its head and
/// whole body are buffered, so the handler never waits on the network. A request with a body
/// stops after its head (``headAwaitingAdmission(remoteAddress:)``) until the connection calls
/// ``admitBody()``, so nothing of the body is parsed before the request has been admitted. Pipelined requests stay
/// buffered and come out one per call, in order. Every limit is checked before memory is
/// committed, and any syntax error is final: the connection is answered and closed, because
/// after a framing error the position of the next request cannot be trusted.
struct HTTPRequestParser {
    /// Limits that protect the server from oversized or hostile input.
    struct Limits {
        /// Maximum bytes of request line plus header fields (and, separately, of chunked trailers).
        var maxHeadBytes: Int
        /// Maximum decoded body bytes.
        var maxBodyBytes: Int
        /// Maximum number of header fields.
        var maxHeaderCount: Int
    }

    /// A fully received request, before the connection adds its remote address.
    struct ParsedRequest {
        var method: HTTPMethod
        var target: String
        var path: String
        var queryItems: [HTTPRequest.QueryItem]
        var version: HTTPVersion
        var headers: HTTPHeaders
        var body: Data
        /// Bytes this request occupied on the wire, framing included; reported to observers.
        var wireByteCount: Int

        func makeRequest(remoteAddress: String) -> HTTPRequest {
            HTTPRequest(
                method: method, target: target, path: path, queryItems: queryItems,
                version: version, headers: headers, body: body, remoteAddress: remoteAddress
            )
        }
    }

    /// A parsed head waiting for its body.
    private struct Head {
        var method: HTTPMethod
        var target: String
        var decodedTarget: RequestTargetDecoder.DecodedTarget
        var version: HTTPVersion
        var headers: HTTPHeaders
        var byteCount: Int
    }

    private enum Framing {
        case noBody
        case contentLength(Int)
        case chunked
    }

    private enum State {
        /// Looking for the blank line that ends the head; `scannedCount` bytes after `readIndex`
        /// are known not to contain it, so each append only scans new bytes.
        case head(scannedCount: Int)
        /// The head of a request with a body is complete; its body waits for ``admitBody()``.
        case awaitingAdmission(Head, Framing)
        case contentLengthBody(Head, length: Int)
        case chunkedBody(Head, ChunkedBodyDecoder)
        case failed(HTTPParseError)
    }

    let limits: Limits
    private var buffer: [UInt8] = []
    /// Start of the bytes not yet consumed by a returned request (or by the current body).
    private var readIndex = 0
    private var state: State = .head(scannedCount: 0)
    private var continuePending = false

    init(limits: Limits) {
        self.limits = limits
    }

    /// Whether bytes of a request that is not yet complete are buffered.
    ///
    /// Blank lines between requests are skipped by ``nextRequest()`` (RFC 9112 §2.2), so after a
    /// call that returned `nil` they no longer count.
    var hasPartialRequest: Bool {
        switch state {
        case .head: return readIndex < buffer.count
        case .awaitingAdmission, .contentLengthBody, .chunkedBody: return true
        case .failed: return false
        }
    }

    /// Whether the head of the current request is complete and its body is being received.
    var isReceivingBody: Bool {
        switch state {
        case .contentLengthBody, .chunkedBody: return true
        case .head, .awaitingAdmission, .failed: return false
        }
    }

    /// Bytes of the current request's body held in memory: received but not yet returned, plus,
    /// for a chunked body, what has been decoded so far. `0` outside a body.
    var bodyBytesHeld: Int {
        switch state {
        case .contentLengthBody(_, let length): return min(length, buffer.count - readIndex)
        case .chunkedBody(_, let decoder): return decoder.decodedBody.count + buffer.count - readIndex
        case .head, .awaitingAdmission, .failed: return 0
        }
    }

    /// The head of a request whose body is not read until ``admitBody()``, or `nil` when no
    /// request is waiting for admission.
    func headAwaitingAdmission(remoteAddress: String) -> HTTPRequestHead? {
        guard case .awaitingAdmission(let head, let framing) = state else { return nil }
        var contentLength: Int?
        if case .contentLength(let length) = framing { contentLength = length }
        return HTTPRequestHead(
            method: head.method, target: head.target, path: head.decodedTarget.path,
            queryItems: head.decodedTarget.queryItems, version: head.version, headers: head.headers,
            contentLength: contentLength, remoteAddress: remoteAddress)
    }

    /// Lets the request waiting for admission read its body. Arms ``takeContinueRequest()`` when
    /// the client sent `Expect: 100-continue`, so the interim response only goes to admitted
    /// requests.
    mutating func admitBody() {
        guard case .awaitingAdmission(let head, let framing) = state else { return }
        switch framing {
        case .noBody: state = .head(scannedCount: 0)
        case .contentLength(let length): state = .contentLengthBody(head, length: length)
        case .chunked: state = .chunkedBody(head, ChunkedBodyDecoder(limits: limits))
        }
        continuePending = head.version == .http1_1
            && head.headers.values(for: "Expect").contains { HTTPHeaders.namesMatch($0, "100-continue") }
    }

    /// Number of buffered bytes not yet consumed.
    var bufferedByteCount: Int { buffer.count - readIndex }

    /// Returns `true` once per request whose client sent `Expect: 100-continue` and is waiting
    /// for permission to send the body.
    mutating func takeContinueRequest() -> Bool {
        defer { continuePending = false }
        return continuePending
    }

    /// Appends received bytes.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: bytes)
    }

    /// Returns the next complete request, `nil` if more bytes are needed, or throws if the input
    /// is malformed or exceeds a limit.
    mutating func nextRequest() throws(HTTPParseError) -> ParsedRequest? {
        defer { compactIfWorthwhile() }
        do {
            return try advance()
        } catch {
            state = .failed(error)
            throw error
        }
    }

    private mutating func advance() throws(HTTPParseError) -> ParsedRequest? {
        while true {
            switch state {
            case .failed(let error):
                throw error
            case .head(let scannedCount):
                guard let head = try parseHeadIfComplete(scannedCount: scannedCount) else { return nil }
                let framing = try framing(of: head)
                if case .noBody = framing { return finish(head, body: Data(), bodyWireBytes: 0) }
                state = .awaitingAdmission(head, framing)
            case .awaitingAdmission:
                return nil
            case .contentLengthBody(let head, let length):
                guard buffer.count - readIndex >= length else { return nil }
                let body = Data(buffer[readIndex..<(readIndex + length)])
                readIndex += length
                return finish(head, body: body, bodyWireBytes: length)
            case .chunkedBody(let head, var decoder):
                // Take the decoder out of `state` so its body buffer is uniquely referenced and
                // appends do not copy it.
                state = .head(scannedCount: 0)
                guard try decoder.decode(buffer, readIndex: &readIndex) else {
                    state = .chunkedBody(head, decoder)
                    return nil
                }
                return finish(head, body: Data(decoder.decodedBody), bodyWireBytes: decoder.wireByteCount)
            }
        }
    }

    private mutating func finish(_ head: Head, body: Data, bodyWireBytes: Int) -> ParsedRequest {
        state = .head(scannedCount: 0)
        continuePending = false
        return ParsedRequest(
            method: head.method, target: head.target, path: head.decodedTarget.path,
            queryItems: head.decodedTarget.queryItems, version: head.version, headers: head.headers,
            body: body, wireByteCount: head.byteCount + bodyWireBytes
        )
    }

    // MARK: - Head

    private mutating func parseHeadIfComplete(scannedCount: Int) throws(HTTPParseError) -> Head? {
        // Skip blank lines left between requests (RFC 9112 §2.2).
        while readIndex < buffer.count,
            buffer[readIndex] == ASCII.carriageReturn || buffer[readIndex] == ASCII.lineFeed
        {
            readIndex += 1
        }
        let start = readIndex
        guard let end = findHeadEnd(from: start, scannedCount: scannedCount) else {
            if buffer.count - start > limits.maxHeadBytes {
                throw .headersTooLarge(limit: limits.maxHeadBytes)
            }
            state = .head(scannedCount: max(0, buffer.count - start - 2))
            return nil
        }
        let byteCount = end + 1 - start
        if byteCount > limits.maxHeadBytes {
            throw .headersTooLarge(limit: limits.maxHeadBytes)
        }
        let head = try parseHead(buffer[start..<end + 1], byteCount: byteCount)
        readIndex = end + 1
        return head
    }

    /// The index of the LF that terminates the empty line ending the head, or `nil`.
    private func findHeadEnd(from start: Int, scannedCount: Int) -> Int? {
        buffer.withUnsafeBufferPointer { bytes -> Int? in
            var index = start + scannedCount
            while index < bytes.count {
                if bytes[index] == ASCII.lineFeed && index > start {
                    if bytes[index - 1] == ASCII.lineFeed { return index }
                    if bytes[index - 1] == ASCII.carriageReturn && index - 1 > start
                        && bytes[index - 2] == ASCII.lineFeed
                    {
                        return index
                    }
                }
                index += 1
            }
            return nil
        }
    }

    private func parseHead(_ head: ArraySlice<UInt8>, byteCount: Int) throws(HTTPParseError) -> Head {
        var lines = HeadLines(head)
        guard let requestLine = try lines.next() else { throw .badRequest("empty request line") }
        let parts = requestLine.split(separator: ASCII.space, maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw .badRequest("malformed request line: expected 'METHOD target HTTP/1.1'")
        }
        guard parts[0].allSatisfy(ASCII.isTokenCharacter) else { throw .badRequest("invalid method token") }
        guard parts[1].allSatisfy(ASCII.isTargetCharacter) else {
            throw .badRequest("request target contains invalid characters")
        }
        let version = try parseVersion(parts[2])
        let decodedTarget = try RequestTargetDecoder.decode(parts[1])

        var headers = HTTPHeaders()
        while let line = try lines.next() {
            guard headers.count < limits.maxHeaderCount else {
                throw HTTPParseError(
                    status: .requestHeaderFieldsTooLarge,
                    message: "more than \(limits.maxHeaderCount) header fields"
                )
            }
            headers.add(try Self.parseField(line))
        }
        let hostCount = headers.values(for: "Host").count
        if hostCount > 1 { throw .badRequest("multiple Host header fields") }
        if hostCount == 0 && version.minor >= 1 { throw .badRequest("missing Host header field") }

        return Head(
            method: HTTPMethod(rawValue: String(decoding: parts[0], as: UTF8.self)),
            target: String(decoding: parts[1], as: UTF8.self),
            decodedTarget: decodedTarget,
            version: version,
            headers: headers,
            byteCount: byteCount
        )
    }

    private func parseVersion(_ bytes: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPVersion {
        let prefix = Array("HTTP/".utf8)
        guard bytes.count == 8, bytes.starts(with: prefix),
            case let major = bytes[bytes.startIndex + 5], ASCII.isDigit(major),
            bytes[bytes.startIndex + 6] == UInt8(ascii: "."),
            case let minor = bytes[bytes.startIndex + 7], ASCII.isDigit(minor)
        else {
            throw .badRequest("malformed HTTP version: expected 'HTTP/1.1'")
        }
        guard major == UInt8(ascii: "1") else {
            throw HTTPParseError(status: .httpVersionNotSupported, message: "only HTTP/1.x is supported")
        }
        return HTTPVersion(major: 1, minor: Int(minor - 0x30))
    }

    /// Parses one `name: value` line; shared with trailer parsing in ``ChunkedBodyDecoder``.
    static func parseField(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPHeaders.Field {
        if line.first == ASCII.space || line.first == ASCII.tab {
            throw .badRequest("obsolete line folding in header fields is not accepted")
        }
        guard let colon = line.firstIndex(of: ASCII.colon) else {
            throw .badRequest("header field without ':'")
        }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(ASCII.isTokenCharacter) else {
            throw .badRequest("invalid header field name")
        }
        var value = line[(colon + 1)...]
        while let first = value.first, first == ASCII.space || first == ASCII.tab { value.removeFirst() }
        while let last = value.last, last == ASCII.space || last == ASCII.tab { value.removeLast() }
        guard value.allSatisfy(ASCII.isFieldValueCharacter) else {
            throw .badRequest("invalid character in header field value")
        }
        return HTTPHeaders.Field(
            name: String(decoding: name, as: UTF8.self),
            value: String(decoding: value, as: UTF8.self)
        )
    }

    /// How the body is delimited (RFC 9112 §6.3).
    ///
    /// Requests carrying both `Content-Length` and `Transfer-Encoding` are rejected outright
    /// instead of preferring one, because such disagreement is the basis of request smuggling.
    private func framing(of head: Head) throws(HTTPParseError) -> Framing {
        let lengths = head.headers.values(for: "Content-Length")
        let encodings = head.headers.values(for: "Transfer-Encoding")
        if !lengths.isEmpty && !encodings.isEmpty {
            throw .badRequest("both Content-Length and Transfer-Encoding are present")
        }
        if !encodings.isEmpty {
            let codings = encodings.flatMap { $0.split(separator: ",") }
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard let last = codings.last, !codings.contains(where: \.isEmpty) else {
                throw .badRequest("empty Transfer-Encoding")
            }
            guard HTTPHeaders.namesMatch(last, "chunked") else {
                throw .badRequest("Transfer-Encoding must end with chunked")
            }
            guard codings.count == 1 else {
                throw HTTPParseError(status: .notImplemented, message: "only the chunked transfer coding is supported")
            }
            return .chunked
        }
        guard !lengths.isEmpty else { return .noBody }
        var length: Int?
        for element in lengths.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let digits = element.trimmingCharacters(in: .whitespaces)
            guard !digits.isEmpty, digits.utf8.count <= 18, digits.utf8.allSatisfy(ASCII.isDigit),
                let value = Int(digits)
            else {
                throw .badRequest("invalid Content-Length")
            }
            if let length, length != value { throw .badRequest("conflicting Content-Length values") }
            length = value
        }
        guard let length else { throw .badRequest("invalid Content-Length") }
        if length > limits.maxBodyBytes { throw .bodyTooLarge(limit: limits.maxBodyBytes) }
        return length == 0 ? .noBody : .contentLength(length)
    }

    // MARK: - Buffer management

    /// Reclaims consumed bytes so a long-lived keep-alive connection does not grow its buffer.
    private mutating func compactIfWorthwhile() {
        if readIndex == buffer.count {
            // Keep a modest buffer for the next request; give large ones back to the allocator.
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
            readIndex = 0
        } else if readIndex >= 16 * 1024 && readIndex * 2 >= buffer.count {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
    }
}

/// Iterates over the lines of a request head, without line terminators.
///
/// A line may end with CRLF or a bare LF (RFC 9112 §2.2 allows accepting LF); a CR anywhere else
/// is rejected because intermediaries disagree on what it means.
private struct HeadLines {
    private let head: ArraySlice<UInt8>
    private var position: Int

    init(_ head: ArraySlice<UInt8>) {
        self.head = head
        position = head.startIndex
    }

    mutating func next() throws(HTTPParseError) -> ArraySlice<UInt8>? {
        guard position < head.endIndex,
            let lineFeed = head[position...].firstIndex(of: ASCII.lineFeed)
        else { return nil }
        var line = head[position..<lineFeed]
        position = lineFeed + 1
        if line.last == ASCII.carriageReturn { line.removeLast() }
        if line.contains(ASCII.carriageReturn) { throw .badRequest("bare CR in request head") }
        return line.isEmpty ? nil : line
    }
}

extension HTTPHeaders {
    fileprivate mutating func add(_ field: Field) {
        add(name: field.name, value: field.value)
    }
}
