import Foundation

/// One client connection: buffering, parsing, admitting requests before their bodies are read,
/// handing complete requests to a worker, writing responses, keep-alive, timeouts and closing.
///
/// Ownership, not locking, keeps it thread-safe: the event loop owns the connection except
/// while a request runs on a worker, which then owns it exclusively until it hands it back with
/// ``EventLoop/execute(_:)``. The worker pool's and the loop's queue locks order those
/// handoffs, so no field is ever touched by two threads at once. While a worker owns the
/// connection the loop only notes readiness, never reads, writes or closes.
final class HTTPConnection: @unchecked Sendable {
    private enum Phase {
        /// Owned by the loop: reading requests and writing responses.
        case active
        /// Owned by a worker thread running the admission check or the handler.
        case processing
        /// Final response sent and write side shut down; discarding input until EOF or timeout.
        case lingering(deadline: UInt64)
        case closed
    }

    /// Details of the exchange in flight, reported when its response is fully written.
    private struct PendingSummary {
        var method: String
        var path: String
        var status: Int
        var requestBytes: Int
        var responseBytes: Int
        var startedAt: UInt64
    }

    let descriptor: Int32
    let remoteAddress: String
    /// Refused connections only carry a `503`; they do not count as open connections.
    let isRefused: Bool
    private let core: HTTPServerCore

    private var phase = Phase.active
    private var parser: HTTPRequestParser
    private var output: [UInt8] = []
    private var outputOffset = 0
    private var closesAfterOutput = false
    private var peerClosedInput = false
    /// Set on every readable event and cleared only by `EAGAIN`, as edge-triggered epoll requires.
    private var mayHaveUnreadInput = true
    private var writeFailed = false
    private var pendingSummary: PendingSummary?
    private var lingerDiscardedBytes = 0
    /// The admission check's verdict, set by the worker that ran it and acted on once the loop
    /// takes the connection back.
    private var admissionOutcome: RequestAdmission?
    /// Bytes of the server-wide body memory budget this connection holds for its current body.
    private var reservedBodyBytes = 0

    /// Monotonic timestamps driving the timeouts in ``checkTimeouts(now:)``.
    private var requestStartedAt: UInt64?
    /// When the current request's head was admitted; the whole body must arrive within
    /// ``HTTPServerConfiguration/bodyTimeout`` of it.
    private var bodyStartedAt: UInt64?
    private var lastReadAt: UInt64
    private var lastWriteProgressAt: UInt64
    private var idleSince: UInt64

    init(descriptor: Int32, remoteAddress: String, core: HTTPServerCore, isRefused: Bool = false) {
        self.descriptor = descriptor
        self.remoteAddress = remoteAddress
        self.core = core
        self.isRefused = isRefused
        parser = HTTPRequestParser(limits: core.parserLimits)
        let now = MonotonicTime.nanoseconds()
        lastReadAt = now
        lastWriteProgressAt = now
        idleSince = now
        if isRefused {
            var refusal = core.errorResponse(.serviceUnavailable, "too many connections")
            refusal.headers.replaceOrAdd(name: "Retry-After", value: String(HTTPServerCore.retryAfterSeconds))
            HTTPResponseSerializer.serialize(
                refusal, omitBody: false, connection: .close, date: core.currentDate(), into: &output)
            closesAfterOutput = true
        }
    }

    /// Whether a worker currently owns the connection. Loop thread only.
    var isProcessing: Bool {
        if case .processing = phase { return true }
        return false
    }

    /// Whether nothing is in progress, so closing loses nothing. Loop thread only.
    var isIdle: Bool {
        guard case .active = phase else { return false }
        return output.isEmpty && !parser.hasPartialRequest
    }

    // MARK: - Loop thread

    /// Handles readiness reported by the poller.
    func handleReadiness(_ event: ReadinessEvent) {
        if event.isReadable { mayHaveUnreadInput = true }
        switch phase {
        case .active, .lingering: process()
        case .processing, .closed: break
        }
    }

    /// Takes the connection back from a worker.
    func resumeAfterProcessing() {
        guard case .processing = phase else { return }
        phase = .active
        // The handler has returned, so the body it was given is no longer held for this request.
        releaseBodyReservation()
        if writeFailed || core.isStopped {
            close()
        } else {
            process()
        }
    }

    /// Drives the connection as far as it can go without blocking.
    func process() {
        while true {
            switch phase {
            case .closed, .processing:
                return
            case .lingering:
                discardInput()
                return
            case .active:
                break
            }
            if outputOffset < output.count {
                guard flushOutput() else { return }
            }
            if closesAfterOutput {
                beginLingering()
                continue
            }
            if let outcome = admissionOutcome {
                admissionOutcome = nil
                settleAdmission(outcome)
                continue
            }
            do {
                if let request = try parser.nextRequest() {
                    dispatch(request)
                    return
                }
                if let head = parser.headAwaitingAdmission(remoteAddress: remoteAddress) {
                    if core.admission != nil {
                        dispatchAdmission(head)
                        return
                    }
                    settleAdmission(.proceed)
                    continue
                }
                if parser.takeContinueRequest() {
                    output.append(contentsOf: "HTTP/1.1 100 Continue\r\n\r\n".utf8)
                    continue
                }
                if parser.isReceivingBody, let refusal = reserveBodyMemory(parser.bodyBytesHeld) {
                    respondWithError(refusal)
                    continue
                }
            } catch {
                respondWithError(error)
                continue
            }
            if parser.hasPartialRequest {
                if requestStartedAt == nil { requestStartedAt = MonotonicTime.nanoseconds() }
            } else if peerClosedInput || core.isDraining {
                // Nothing half-received, so closing loses nothing.
                close()
                return
            }
            if peerClosedInput {
                close()
                return
            }
            guard mayHaveUnreadInput else {
                core.loop.setInterest(descriptor, .read)
                return
            }
            guard readAvailableInput() else { return }
        }
    }

    /// Applies the read, body, idle, write and linger timeouts. Loop thread only.
    func checkTimeouts(now: UInt64) {
        let timeouts = core.timeouts
        switch phase {
        case .processing, .closed:
            return
        case .lingering(let deadline):
            if now >= deadline { close() }
            return
        case .active:
            break
        }
        if outputOffset < output.count {
            if now &- lastWriteProgressAt >= timeouts.write { close() }
        } else if let startedAt = requestStartedAt {
            let expired: String?
            if parser.isReceivingBody, let bodyStartedAt, now &- bodyStartedAt >= timeouts.body {
                expired = "request body not received within \(timeouts.body / 1_000_000) ms"
            } else if now &- (parser.isReceivingBody ? lastReadAt : startedAt) >= timeouts.read {
                expired = "request not received within \(timeouts.read / 1_000_000) ms"
            } else {
                expired = nil
            }
            if let expired {
                respondWithError(HTTPParseError(status: .requestTimeout, message: expired))
                process()
            }
        } else if now &- idleSince >= timeouts.idle {
            close()
        }
    }

    /// How much shedding this connection would cost, for ``HTTPServerCore`` making room for a new
    /// one at the connection limit: a lower `priority` goes first, and within one priority the
    /// earliest `since`. `nil` when it must not be shed: a worker owns it or a response is being
    /// written. Loop thread only.
    func sheddingRank() -> (priority: Int, since: UInt64)? {
        switch phase {
        case .processing, .closed:
            return nil
        case .lingering(let deadline):
            // Already answered; only waiting for the client to go away.
            return (0, deadline)
        case .active:
            break
        }
        if outputOffset < output.count { return nil }
        if let requestStartedAt { return (2, requestStartedAt) }
        return (1, idleSince)
    }

    /// Closes the connection to make room for a new one, first trying (without waiting) to tell a
    /// client that is part-way through a request to retry. Loop thread only.
    func shed() {
        if case .active = phase, requestStartedAt != nil, outputOffset == output.count {
            respondWithError(HTTPParseError(
                status: .serviceUnavailable, message: "the server is at its connection limit and closed the slowest request"))
            _ = writePendingOutput()
        }
        close()
    }

    /// Closes the socket and unregisters the connection. Loop thread only.
    func close() {
        if case .closed = phase { return }
        phase = .closed
        releaseBodyReservation()
        if pendingSummary != nil { reportSummary(responseBytesWritten: outputOffset) }
        core.loop.deregister(descriptor)
        Socket.closeDescriptor(descriptor)
        core.connectionClosed(self, onLoopThread: true)
    }

    /// Reads until the socket is drained or a complete request is buffered. Returns `false` if
    /// processing must stop here (closed, or waiting for the next readiness event).
    private func readAvailableInput() -> Bool {
        let buffer = core.readBuffer
        switch Socket.receive(descriptor, into: buffer) {
        case .transferred(let count):
            parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            lastReadAt = MonotonicTime.nanoseconds()
            return true
        case .endOfStream:
            peerClosedInput = true
            mayHaveUnreadInput = false
            return true
        case .wouldBlock:
            mayHaveUnreadInput = false
            core.loop.setInterest(descriptor, .read)
            return false
        case .failed:
            close()
            return false
        }
    }

    private func dispatch(_ request: HTTPRequestParser.ParsedRequest) {
        phase = .processing
        core.loop.setInterest(descriptor, .none)
        let startedAt = requestStartedAt ?? MonotonicTime.nanoseconds()
        requestStartedAt = nil
        bodyStartedAt = nil
        core.submitToWorker { [self] in
            processOnWorker(request, startedAt: startedAt)
        }
    }

    /// Hands a head waiting for admission to a worker: the check may block (e.g. looking a token
    /// up in SQLite), which the event loop must never do.
    private func dispatchAdmission(_ head: HTTPRequestHead) {
        phase = .processing
        core.loop.setInterest(descriptor, .none)
        core.submitToWorker { [self] in
            if !core.isStopped, let admission = core.admission {
                admissionOutcome = admission(head)
            }
            handBackToLoop()
        }
    }

    /// Acts on an admission verdict: a refusal is sent at once and the connection closes without
    /// reading the body; an admitted body must fit the server's body memory budget, and its
    /// overall deadline starts now.
    private func settleAdmission(_ outcome: RequestAdmission) {
        switch outcome {
        case .respond(let response):
            let head = parser.headAwaitingAdmission(remoteAddress: remoteAddress)
            respond(with: response, method: head?.method.rawValue ?? "-", path: head?.path ?? "-")
        case .proceed:
            let declaredLength = parser.headAwaitingAdmission(remoteAddress: remoteAddress)?.contentLength ?? 0
            parser.admitBody()
            let now = MonotonicTime.nanoseconds()
            bodyStartedAt = now
            lastReadAt = now
            if let refusal = reserveBodyMemory(declaredLength) {
                respondWithError(refusal)
            }
        }
    }

    /// Grows this connection's share of the server-wide body memory budget to `bytes`; returns the
    /// `503` to send when the budget cannot cover it.
    private func reserveBodyMemory(_ bytes: Int) -> HTTPParseError? {
        guard bytes > reservedBodyBytes else { return nil }
        guard core.reserveBodyMemory(bytes - reservedBodyBytes) else {
            return HTTPParseError(
                status: .serviceUnavailable,
                message: "the server is holding too many unfinished request bodies; retry shortly")
        }
        reservedBodyBytes = bytes
        return nil
    }

    private func releaseBodyReservation() {
        guard reservedBodyBytes > 0 else { return }
        core.releaseBodyMemory(reservedBodyBytes)
        reservedBodyBytes = 0
    }

    private func respondWithError(_ error: HTTPParseError) {
        var response = core.errorResponse(error.status, error.message)
        if error.status == .serviceUnavailable {
            response.headers.replaceOrAdd(name: "Retry-After", value: String(HTTPServerCore.retryAfterSeconds))
        }
        respond(with: response, method: "-", path: "-")
    }

    /// Queues a final response sent before the request reached the handler, then closes.
    private func respond(with response: HTTPResponse, method: String, path: String) {
        let startedAt = requestStartedAt ?? MonotonicTime.nanoseconds()
        requestStartedAt = nil
        bodyStartedAt = nil
        let written = HTTPResponseSerializer.serialize(
            response, omitBody: false, connection: .close, date: core.currentDate(), into: &output)
        pendingSummary = PendingSummary(
            method: method, path: path, status: response.status.code, requestBytes: parser.bufferedByteCount,
            responseBytes: written, startedAt: startedAt)
        closesAfterOutput = true
    }

    /// Sends FIN, then keeps reading so a client still uploading sees our response instead of a
    /// reset (closing with unread input makes the kernel send RST, which can discard the response
    /// before the client reads it).
    private func beginLingering() {
        Socket.shutdownWrite(descriptor)
        phase = .lingering(deadline: MonotonicTime.nanoseconds() &+ core.timeouts.linger)
        mayHaveUnreadInput = true
        core.loop.setInterest(descriptor, .read)
    }

    private func discardInput() {
        let buffer = core.readBuffer
        while true {
            switch Socket.receive(descriptor, into: buffer) {
            case .transferred(let count):
                lingerDiscardedBytes += count
                // A client that keeps streaming is not going to read our response anyway.
                if lingerDiscardedBytes > 4 * 1024 * 1024 {
                    close()
                    return
                }
            case .wouldBlock:
                return
            case .endOfStream, .failed:
                close()
                return
            }
        }
    }

    /// Writes pending output. Returns `true` once all of it is written; `false` if the socket is
    /// full (interest switches to writable) or the connection failed and was closed.
    private func flushOutput() -> Bool {
        switch writePendingOutput() {
        case .complete:
            return true
        case .blocked:
            core.loop.setInterest(descriptor, .write)
            return false
        case .failed:
            close()
            return false
        }
    }

    // MARK: - Either owner

    private enum WriteOutcome {
        case complete
        case blocked
        case failed
    }

    /// Writes as much pending output as the socket takes; resets the buffer once all is written.
    private func writePendingOutput() -> WriteOutcome {
        var lastSendStartedAt = MonotonicTime.nanoseconds()
        while outputOffset < output.count {
            lastSendStartedAt = MonotonicTime.nanoseconds()
            let result = output.withUnsafeBytes { bytes in
                Socket.send(descriptor, UnsafeRawBufferPointer(rebasing: bytes[outputOffset...]))
            }
            switch result {
            case .transferred(let count):
                outputOffset += count
                lastWriteProgressAt = MonotonicTime.nanoseconds()
            case .wouldBlock:
                return .blocked
            case .endOfStream, .failed:
                return .failed
            }
        }
        if pendingSummary != nil { reportSummary(responseBytesWritten: outputOffset) }
        // Keep a small buffer for the next response; release large ones.
        output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
        outputOffset = 0
        // Idle from just before the send that completed the response: the client may read it and
        // act (open another connection, send another request) before this thread runs on, and what
        // it does next must never look idle for longer than this connection.
        idleSince = lastSendStartedAt
        return .complete
    }

    private func reportSummary(responseBytesWritten: Int) {
        guard let summary = pendingSummary else { return }
        pendingSummary = nil
        let elapsed = MonotonicTime.nanoseconds() &- summary.startedAt
        core.requestCompleted(
            HTTPRequestSummary(
                method: summary.method, path: summary.path, status: summary.status,
                requestBytes: summary.requestBytes, responseBytes: min(summary.responseBytes, responseBytesWritten),
                duration: .nanoseconds(Int64(clamping: elapsed)), remoteAddress: remoteAddress))
    }

    // MARK: - Worker thread

    /// Runs the handler, serializes the response and writes as much as the socket accepts right
    /// away, so the common case needs no extra trip through the event loop to send.
    private func processOnWorker(_ parsed: HTTPRequestParser.ParsedRequest, startedAt: UInt64) {
        if core.isStopped {
            handBackToLoop()
            return
        }
        let request = parsed.makeRequest(remoteAddress: remoteAddress)
        let response = core.handler(request)
        if core.isStopped {
            // The grace period ran out while the handler ran; the connection is closed unanswered.
            handBackToLoop()
            return
        }
        let keepsAlive = request.wantsKeepAlive && !HTTPResponseSerializer.requestsClose(response)
            && !core.isDraining
        let disposition: HTTPResponseSerializer.ConnectionDisposition =
            !keepsAlive ? .close : (request.version == .http1_0 ? .keepAliveExplicit : .keepAlive)
        let written = HTTPResponseSerializer.serialize(
            response, omitBody: request.method == .head, connection: disposition,
            date: core.currentDate(), into: &output)
        closesAfterOutput = !keepsAlive
        pendingSummary = PendingSummary(
            method: request.method.rawValue, path: request.path, status: response.status.code,
            requestBytes: parsed.wireByteCount, responseBytes: written, startedAt: startedAt)
        if case .failed = writePendingOutput() { writeFailed = true }
        handBackToLoop()
    }

    private func handBackToLoop() {
        // The request counts as active until the loop has the connection back: until then the
        // loop treats the connection as busy (it is never shed), whatever the worker has sent.
        let accepted = core.loop.execute { [self] in
            core.requestLeftWorker()
            resumeAfterProcessing()
        }
        if !accepted {
            core.requestLeftWorker()
            closeAbandonedByLoop()
        }
    }

    /// The loop stopped (grace period over) before this worker finished, so nobody else will
    /// close the socket. `phase` stays `.processing` on purpose: the loop thread may still be
    /// reading it during its final cleanup, and `.processing` is what keeps it from closing the
    /// descriptor a second time.
    private func closeAbandonedByLoop() {
        if pendingSummary != nil { reportSummary(responseBytesWritten: outputOffset) }
        Socket.closeDescriptor(descriptor)
        core.connectionClosed(self, onLoopThread: false)
    }
}
