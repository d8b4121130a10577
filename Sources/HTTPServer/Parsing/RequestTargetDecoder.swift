/// Splits a request target into a percent-decoded path and query items (RFC 9112 §3.2).
enum RequestTargetDecoder {
    struct DecodedTarget {
        var path: String
        var queryItems: [HTTPRequest.QueryItem]
    }

    /// Decodes origin-form (`/a?b`), absolute-form (`http://host/a?b`) and asterisk-form (`*`).
    ///
    /// Invalid percent-escapes or escapes that decode to invalid UTF-8 are rejected rather than
    /// passed on, so routes never see two different spellings of a "decoded" path.
    static func decode(_ target: ArraySlice<UInt8>) throws(HTTPParseError) -> DecodedTarget {
        if target.count == 1 && target.first == UInt8(ascii: "*") {
            return DecodedTarget(path: "*", queryItems: [])
        }
        var pathStart = target.startIndex
        if target.first != ASCII.slash {
            guard let afterAuthority = absoluteFormPathStart(target) else {
                throw .badRequest("request target must be an absolute path, absolute URI or *")
            }
            pathStart = afterAuthority
        }
        if target[pathStart...].contains(ASCII.hash) {
            throw .badRequest("request target must not contain a fragment")
        }
        let queryStart = target[pathStart...].firstIndex(of: ASCII.questionMark)
        let pathBytes = target[pathStart..<(queryStart ?? target.endIndex)]
        guard var path = percentDecoded(pathBytes, plusAsSpace: false) else {
            throw .badRequest("invalid percent-encoding in path")
        }
        if path.isEmpty { path = "/" }

        var items: [HTTPRequest.QueryItem] = []
        if let queryStart {
            let query = target[(queryStart + 1)...]
            for pair in query.split(separator: ASCII.ampersand, omittingEmptySubsequences: true) {
                let equals = pair.firstIndex(of: ASCII.equals)
                let nameBytes = pair[..<(equals ?? pair.endIndex)]
                let valueBytes = equals.map { pair[($0 + 1)...] } ?? pair[pair.endIndex...]
                guard let name = percentDecoded(nameBytes, plusAsSpace: true),
                    let value = percentDecoded(valueBytes, plusAsSpace: true)
                else {
                    throw .badRequest("invalid percent-encoding in query")
                }
                items.append(HTTPRequest.QueryItem(name: name, value: value))
            }
        }
        return DecodedTarget(path: path, queryItems: items)
    }

    /// For `scheme://authority/path`, the index where the path starts (or the end if there is
    /// none); `nil` if the target is not an absolute URI.
    private static func absoluteFormPathStart(_ target: ArraySlice<UInt8>) -> Int? {
        let separator = Array("://".utf8)
        var index = target.startIndex
        while index < target.endIndex, target[index] != ASCII.colon {
            let byte = ASCII.lowercased(target[index])
            let isSchemeByte = (byte >= 0x61 && byte <= 0x7A) || ASCII.isDigit(byte)
                || byte == ASCII.plus || byte == 0x2D || byte == 0x2E
            guard isSchemeByte else { return nil }
            index += 1
        }
        guard index > target.startIndex, target[index...].starts(with: separator) else { return nil }
        let authorityStart = index + separator.count
        return target[authorityStart...].firstIndex { $0 == ASCII.slash || $0 == ASCII.questionMark }
            ?? target.endIndex
    }

    /// Percent-decodes `bytes` into a UTF-8 string; `nil` for a broken escape or invalid UTF-8.
    static func percentDecoded(_ bytes: ArraySlice<UInt8>, plusAsSpace: Bool) -> String? {
        if !bytes.contains(ASCII.percent) && !(plusAsSpace && bytes.contains(ASCII.plus)) {
            // Request targets are validated to be visible ASCII, so this is always valid UTF-8.
            return String(decoding: bytes, as: UTF8.self)
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == ASCII.percent {
                guard bytes.endIndex - index >= 3,
                    let high = ASCII.hexValue(bytes[index + 1]),
                    let low = ASCII.hexValue(bytes[index + 2])
                else { return nil }
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(plusAsSpace && byte == ASCII.plus ? ASCII.space : byte)
                index += 1
            }
        }
        return validUTF8String(decoded)
    }

    private static func validUTF8String(_ bytes: [UInt8]) -> String? {
        let hadError = transcode(
            bytes.makeIterator(), from: UTF8.self, to: UTF32.self, stoppingOnError: true
        ) { _ in }
        return hadError ? nil : String(decoding: bytes, as: UTF8.self)
    }
}
