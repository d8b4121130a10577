import Foundation

/// Turns an ``HTTPResponse`` into wire bytes.
///
/// Builds the head with plain byte appends (no `String(format:)`, no interpolation) because it
/// runs once per request on the hot path.
enum HTTPResponseSerializer {
    /// How the `Connection` field must read for this exchange.
    enum ConnectionDisposition {
        /// Keep the connection; HTTP/1.1 needs no field for that.
        case keepAlive
        /// Keep the connection and say so explicitly, as an HTTP/1.0 client expects.
        case keepAliveExplicit
        /// The server closes after this response and must say `Connection: close`.
        case close
    }

    /// Appends the serialized response to `output` and returns the number of bytes appended.
    @discardableResult
    static func serialize(
        _ response: HTTPResponse,
        omitBody: Bool,
        connection: ConnectionDisposition,
        date: [UInt8]?,
        into output: inout [UInt8]
    ) -> Int {
        let startCount = output.count
        let sendsBody = !response.status.forbidsBody
        output.reserveCapacity(output.count + 160 + (sendsBody && !omitBody ? response.body.count : 0))

        output.append(contentsOf: "HTTP/1.1 ".utf8)
        appendDecimal(min(max(response.status.code, 100), 999), to: &output)
        output.append(ASCII.space)
        appendSanitized(response.status.reasonPhrase, to: &output)
        appendLineEnd(to: &output)

        for field in response.headers where isApplicationField(field) {
            output.append(contentsOf: field.name.utf8)
            output.append(contentsOf: ": ".utf8)
            output.append(contentsOf: field.value.utf8)
            appendLineEnd(to: &output)
        }
        if sendsBody {
            output.append(contentsOf: "Content-Length: ".utf8)
            appendDecimal(response.body.count, to: &output)
            appendLineEnd(to: &output)
        }
        switch connection {
        case .keepAlive:
            break
        case .keepAliveExplicit:
            output.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        case .close:
            output.append(contentsOf: "Connection: close\r\n".utf8)
        }
        if let date {
            output.append(contentsOf: "Date: ".utf8)
            output.append(contentsOf: date)
            appendLineEnd(to: &output)
        }
        appendLineEnd(to: &output)
        if sendsBody && !omitBody && !response.body.isEmpty {
            output.append(contentsOf: response.body)
        }
        return output.count - startCount
    }

    /// Whether the handler asked the server to close the connection after this response.
    static func requestsClose(_ response: HTTPResponse) -> Bool {
        response.headers.containsToken("close", in: "Connection")
    }

    /// Fields the server writes itself are skipped so framing can never disagree with the body,
    /// and fields that would break the message syntax are dropped rather than sent.
    private static func isApplicationField(_ field: HTTPHeaders.Field) -> Bool {
        if HTTPHeaders.namesMatch(field.name, "Content-Length")
            || HTTPHeaders.namesMatch(field.name, "Transfer-Encoding")
            || HTTPHeaders.namesMatch(field.name, "Connection")
        {
            return false
        }
        guard !field.name.isEmpty, field.name.utf8.allSatisfy(ASCII.isTokenCharacter) else { return false }
        return field.value.utf8.allSatisfy(ASCII.isFieldValueCharacter)
    }

    private static func appendSanitized(_ text: String, to output: inout [UInt8]) {
        for byte in text.utf8 {
            output.append(ASCII.isFieldValueCharacter(byte) ? byte : ASCII.space)
        }
    }

    private static func appendLineEnd(to output: inout [UInt8]) {
        output.append(ASCII.carriageReturn)
        output.append(ASCII.lineFeed)
    }

    static func appendDecimal(_ value: Int, to output: inout [UInt8]) {
        guard value > 0 else {
            output.append(0x30)
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var remaining = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            while remaining > 0 {
                buffer[count] = 0x30 + UInt8(remaining % 10)
                remaining /= 10
                count += 1
            }
            while count > 0 {
                count -= 1
                output.append(buffer[count])
            }
        }
    }
}
