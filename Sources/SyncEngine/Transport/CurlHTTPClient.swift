internal import CLibcurl
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one request through libcurl, trusting the system's certificate authorities or those of
/// a PEM file.
///
/// On Linux every request of a client that was not handed a `URLSession` goes this way:
/// FoundationNetworking's `URLSession` drives libcurl from dispatch sources and keeps about a
/// core busy while a large body is in flight, and it offers no way to name certificate
/// authorities (a server behind a private one, ``SyncClient/Configuration/certificateAuthorities``).
/// The transfer blocks a thread of its own, never one of Swift's cooperative pool, and stops
/// when the calling task is cancelled. Easy handles are kept between transfers, and with them
/// their open connections (libcurl keeps a handle's connection cache through `curl_easy_reset`),
/// so a client's next request reuses a connection rather than opening one.
enum CurlHTTPClient {
    /// Initializes libcurl once, before any handle exists.
    private static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    /// The threads transfers block.
    private static let queue = DispatchQueue(label: "SyncKit.CurlHTTPClient", attributes: .concurrent)

    /// An easy handle, used by one transfer at a time.
    private struct Handle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    /// Handles between transfers, with their open connections; at most ``maximumIdleHandles``.
    private static let idleHandles = Mutex<[Handle]>([])
    private static let maximumIdleHandles = 8

    /// An idle handle, or a new one.
    private static func takeHandle() -> UnsafeMutableRawPointer? {
        if let idle = idleHandles.withLock({ $0.popLast() }) { return idle.pointer }
        return curl_easy_init()
    }

    /// Clears the options of `handle` (its connections stay) and keeps it for the next transfer.
    private static func giveBack(_ handle: UnsafeMutableRawPointer) {
        curl_easy_reset(handle)
        let kept = idleHandles.withLock { idle in
            guard idle.count < maximumIdleHandles else { return false }
            idle.append(Handle(pointer: handle))
            return true
        }
        if !kept { curl_easy_cleanup(handle) }
    }

    /// Why a transfer failed, in libcurl's words.
    struct TransferError: Error, CustomStringConvertible {
        var description: String
    }

    /// What one transfer collects as libcurl hands it over.
    private final class Transfer: @unchecked Sendable {
        // Written only by libcurl's callbacks on the transfer's thread, read after it returns.
        var body = Data()
        var headerLines: [String] = []
        let cancelled = Atomic<Bool>(false)
    }

    /// Sends `request` (method, URL, headers, body, `timeoutInterval`), trusting only the
    /// certificate authorities in the PEM file at `certificateAuthorities`, or the system's when it is `nil`.
    static func send(_ request: URLRequest, certificateAuthorities: URL?) async throws -> (Data, HTTPURLResponse) {
        let transfer = Transfer()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                queue.async {
                    continuation.resume(with: Result { try perform(request, certificateAuthorities: certificateAuthorities, into: transfer) })
                }
            }
        } onCancel: {
            transfer.cancelled.store(true, ordering: .relaxed)
        }
    }

    private static func perform(_ request: URLRequest, certificateAuthorities: URL?, into transfer: Transfer) throws -> (Data, HTTPURLResponse) {
        guard let url = request.url else { throw TransferError(description: "the request has no URL") }
        guard initialized, let handle = takeHandle() else { throw TransferError(description: "libcurl could not be initialized") }
        defer { giveBack(handle) }
        var headers: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headers) }
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers = curl_slist_append(headers, "\(name): \(value)") }
        // A body goes out at once: no `Expect: 100-continue` round trip.
        headers = curl_slist_append(headers, "Expect:")

        let context = Unmanaged.passUnretained(transfer).toOpaque()
        let method = request.httpMethod ?? "GET"
        // Read by libcurl until the transfer ends, unlike the string options, which it copies.
        let failure = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        failure.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        defer { failure.deallocate() }
        var setup = CURLE_OK
        func set(_ result: CURLcode) { if setup == CURLE_OK { setup = result } }
        set(url.absoluteString.withCString { clibcurl_set_pointer(handle, CURLOPT_URL, $0) })
        if let certificateAuthorities {
            set(certificateAuthorities.path.withCString { clibcurl_set_pointer(handle, CURLOPT_CAINFO, $0) })
        }
        set(clibcurl_set_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
        set(clibcurl_set_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
        // Signals would hit whichever thread runs; timeouts work without them.
        set(clibcurl_set_long(handle, CURLOPT_NOSIGNAL, 1))
        set(clibcurl_set_pointer(handle, CURLOPT_ERRORBUFFER, failure))
        set(clibcurl_set_pointer(handle, CURLOPT_HTTPHEADER, headers))
        // `timeoutInterval` as URLSession reads it: how long to wait for the connection and then
        // for more data, not a limit on the whole transfer (a large pull page or snapshot may
        // take longer).
        let timeout = max(1, request.timeoutInterval)
        set(clibcurl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(timeout * 1000)))
        set(clibcurl_set_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1))
        set(clibcurl_set_long(handle, CURLOPT_LOW_SPEED_TIME, Int(timeout.rounded(.up))))
        if method == "GET" {
            set(clibcurl_set_long(handle, CURLOPT_HTTPGET, 1))
        } else {
            set(method.withCString { clibcurl_set_pointer(handle, CURLOPT_CUSTOMREQUEST, $0) })
        }
        set(clibcurl_set_data_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            if let data { transfer.body.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: size * count) }
            return size * count
        })
        set(clibcurl_set_pointer(handle, CURLOPT_WRITEDATA, context))
        set(clibcurl_set_data_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            if let data {
                let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                // A new status line (after a 100 Continue or a redirect) starts the headers over.
                if line.hasPrefix("HTTP/") { transfer.headerLines = [] } else if !line.isEmpty { transfer.headerLines.append(line) }
            }
            return size * count
        })
        set(clibcurl_set_pointer(handle, CURLOPT_HEADERDATA, context))
        set(clibcurl_set_progress_callback(handle) { context, _, _, _, _ in
            // Non-zero aborts the transfer: the task was cancelled.
            Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue().cancelled.load(ordering: .relaxed) ? 1 : 0
        })
        set(clibcurl_set_pointer(handle, CURLOPT_XFERINFODATA, context))
        set(clibcurl_set_long(handle, CURLOPT_NOPROGRESS, 0))
        let code: CURLcode = (request.httpBody ?? Data()).withUnsafeBytes { body in
            if method != "GET", request.httpBody != nil {
                set(clibcurl_set_size(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
                // The body is read during the transfer, from here. An empty one still needs a valid
                // pointer; libcurl reads none of it.
                set(clibcurl_set_pointer(handle, CURLOPT_POSTFIELDS, body.baseAddress ?? UnsafeRawPointer(failure)))
            }
            return setup == CURLE_OK ? curl_easy_perform(handle) : setup
        }
        if transfer.cancelled.load(ordering: .relaxed) { throw CancellationError() }
        guard code == CURLE_OK else {
            let detail = String(decoding: UnsafeBufferPointer(start: failure, count: strlen(failure)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw TransferError(description: detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail)
        }
        var status = 0
        _ = clibcurl_response_code(handle, &status)
        var fields: [String: String] = [:]
        for line in transfer.headerLines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon]).trimmingCharacters(in: .whitespaces)
            let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            fields[name] = fields[name].map { "\($0), \(value)" } ?? value
        }
        guard let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields) else {
            throw TransferError(description: "libcurl returned no response")
        }
        return (transfer.body, response)
    }
}
