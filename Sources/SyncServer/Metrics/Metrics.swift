import Foundation
import SyncEngine

/// The server's Prometheus metrics, exposed at `GET /metrics` in text format 0.0.4.
///
/// Lock-protected: requests finish on many threads and record here; one short critical
/// section per request.
package final class Metrics: @unchecked Sendable {
    // @unchecked: every mutable field is only accessed while holding `lock`.

    /// Upper bounds of the latency histogram's buckets, in seconds.
    package static let durationBuckets: [Double] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5]
    /// Methods reported by name; any other becomes `other`, so clients cannot grow the label set.
    static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    private struct RequestKey: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    private let lock = NSLock()
    private var requests: [RequestKey: UInt64] = [:]
    private var bucketCounts = [UInt64](repeating: 0, count: Metrics.durationBuckets.count)
    private var durationSum: Double = 0
    private var durationCount: UInt64 = 0
    private var changeSetsStored: [String: UInt64] = [:]
    private var logEnds: [String: Int64] = [:]
    private var requestBytes: UInt64 = 0
    private var responseBytes: UInt64 = 0
    private var openConnections: (@Sendable () -> Int)?
    private var stableVectorLags: (@Sendable () -> [(dataset: String, lag: UInt64)])?
    private var compactionBytesReclaimed: [String: UInt64] = [:]
    private var compactionFileBytesFreed: [String: UInt64] = [:]
    private var compactionObjectsForgotten: [String: UInt64] = [:]
    private var compactionIdentifiersReleased: [String: UInt64] = [:]
    private var compactionEntriesFolded: [String: UInt64] = [:]
    private var logStarts: [String: Int64] = [:]

    package init() {}

    /// Records one finished exchange. `route` is the matched route pattern (not the raw path,
    /// which would give every dataset its own series), or `unmatched`.
    package func recordRequest(method: String, route: String, status: Int, duration: Duration, requestBytes: Int, responseBytes: Int) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        let key = RequestKey(method: Metrics.knownMethods.contains(method) ? method : "other", route: route, status: status)
        lock.lock()
        defer { lock.unlock() }
        requests[key, default: 0] += 1
        for (index, bound) in Metrics.durationBuckets.enumerated() where seconds <= bound { bucketCounts[index] += 1 }
        durationSum += seconds
        durationCount += 1
        self.requestBytes &+= UInt64(max(0, requestBytes))
        self.responseBytes &+= UInt64(max(0, responseBytes))
    }

    /// Counts change sets a push stored in `dataset`.
    package func recordStored(dataset: String, count: Int) {
        guard count > 0 else { return }
        lock.lock()
        changeSetsStored[dataset, default: 0] += UInt64(count)
        lock.unlock()
    }

    /// Notes that `dataset`'s log reaches at least `cursor` (seen by a push, or by a pull that
    /// read to the end): the log's length, as this instance last saw it.
    package func recordLogEnd(dataset: String, cursor: Int64) {
        lock.lock()
        if cursor > logEnds[dataset, default: 0] { logEnds[dataset] = cursor }
        lock.unlock()
    }

    /// Records a compaction of `dataset`'s log: the bytes it reclaimed, the objects it forgot, the
    /// entries it folded into the log's floor and where the log starts now.
    package func recordCompaction(dataset: String, report: CompactionReport) {
        lock.lock()
        compactionBytesReclaimed[dataset, default: 0] &+= UInt64(max(0, report.payloadBytesRemoved + report.mergedState.bytes))
        compactionFileBytesFreed[dataset, default: 0] &+= UInt64(max(0, report.fileBytesFreed))
        compactionObjectsForgotten[dataset, default: 0] &+= UInt64(max(0, report.mergedState.forgottenObjects))
        compactionIdentifiersReleased[dataset, default: 0] &+= UInt64(max(0, report.identifiersReleased))
        compactionEntriesFolded[dataset, default: 0] &+= UInt64(max(0, report.entriesFolded))
        logStarts[dataset] = report.logStart.cursor
        lock.unlock()
    }

    /// Where `syncd_open_connections` comes from (the HTTP server's statistics).
    package func setOpenConnectionsSource(_ source: @escaping @Sendable () -> Int) {
        lock.lock()
        openConnections = source
        lock.unlock()
    }

    /// Where `syncd_stable_vector_lag` comes from: read at each scrape, not on every pull.
    package func setStableVectorLagSource(_ source: @escaping @Sendable () -> [(dataset: String, lag: UInt64)]) {
        lock.lock()
        stableVectorLags = source
        lock.unlock()
    }

    /// The text exposition.
    package func exposition() -> String {
        lock.lock()
        let requests = self.requests, bucketCounts = self.bucketCounts, durationSum = self.durationSum
        let durationCount = self.durationCount, changeSetsStored = self.changeSetsStored, logEnds = self.logEnds
        let requestBytes = self.requestBytes, responseBytes = self.responseBytes, openConnections = self.openConnections
        let stableVectorLags = self.stableVectorLags
        let compactionBytesReclaimed = self.compactionBytesReclaimed, logStarts = self.logStarts
        let compactionFileBytesFreed = self.compactionFileBytesFreed, compactionObjectsForgotten = self.compactionObjectsForgotten
        let compactionEntriesFolded = self.compactionEntriesFolded, compactionIdentifiersReleased = self.compactionIdentifiersReleased
        lock.unlock()

        var lines: [String] = []
        lines.append("# HELP syncd_requests_total HTTP requests answered, by method, route pattern and status.")
        lines.append("# TYPE syncd_requests_total counter")
        for (key, count) in requests.sorted(by: { ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status) }) {
            lines.append("syncd_requests_total{method=\"\(Metrics.escape(key.method))\",route=\"\(Metrics.escape(key.route))\",status=\"\(key.status)\"} \(count)")
        }
        lines.append("# HELP syncd_request_duration_seconds Time from a request's first byte to its response's last byte.")
        lines.append("# TYPE syncd_request_duration_seconds histogram")
        for (bound, count) in zip(Metrics.durationBuckets, bucketCounts) {
            lines.append("syncd_request_duration_seconds_bucket{le=\"\(Metrics.format(bound))\"} \(count)")
        }
        lines.append("syncd_request_duration_seconds_bucket{le=\"+Inf\"} \(durationCount)")
        lines.append("syncd_request_duration_seconds_sum \(durationSum)")
        lines.append("syncd_request_duration_seconds_count \(durationCount)")
        lines.append("# HELP syncd_changesets_stored_total Change sets stored by pushes, by dataset.")
        lines.append("# TYPE syncd_changesets_stored_total counter")
        for (dataset, count) in changeSetsStored.sorted(by: { $0.key < $1.key }) {
            lines.append("syncd_changesets_stored_total{dataset=\"\(Metrics.escape(dataset))\"} \(count)")
        }
        lines.append("# HELP syncd_log_change_sets Change sets in each dataset's log, as this instance last saw its end (by a push, or a pull that read to the end).")
        lines.append("# TYPE syncd_log_change_sets gauge")
        for (dataset, cursor) in logEnds.sorted(by: { $0.key < $1.key }) {
            lines.append("syncd_log_change_sets{dataset=\"\(Metrics.escape(dataset))\"} \(cursor)")
        }
        Metrics.appendDatasetSeries("syncd_compaction_bytes_reclaimed_total", type: "counter",
                                    help: "Bytes of change sets log compaction deleted, by dataset.", compactionBytesReclaimed, to: &lines)
        Metrics.appendDatasetSeries("syncd_compaction_file_bytes_freed_total", type: "counter",
                                    help: "Bytes by which log compaction shrank each dataset's store file and WAL on this instance.",
                                    compactionFileBytesFreed, to: &lines)
        Metrics.appendDatasetSeries("syncd_compaction_objects_forgotten_total", type: "counter",
                                    help: "Deleted objects whose every record compaction dropped, by dataset (their identifiers stay).",
                                    compactionObjectsForgotten, to: &lines)
        Metrics.appendDatasetSeries("syncd_compaction_identifiers_released_total", type: "counter",
                                    help: "Identifiers of forgotten objects released once every active replica reported forgetting them, by dataset.",
                                    compactionIdentifiersReleased, to: &lines)
        Metrics.appendDatasetSeries("syncd_compaction_entries_folded_total", type: "counter",
                                    help: "Compacted log entries folded into each dataset's log floor (no per-entry record left), by dataset.",
                                    compactionEntriesFolded, to: &lines)
        Metrics.appendDatasetSeries("syncd_log_start_cursor", type: "gauge",
                                    help: "The compaction point of each dataset's log, as of this instance's last compaction of it.", logStarts, to: &lines)
        lines.append("# HELP syncd_request_bytes_total Bytes of requests received.")
        lines.append("# TYPE syncd_request_bytes_total counter")
        lines.append("syncd_request_bytes_total \(requestBytes)")
        lines.append("# HELP syncd_response_bytes_total Bytes of responses sent.")
        lines.append("# TYPE syncd_response_bytes_total counter")
        lines.append("syncd_response_bytes_total \(responseBytes)")
        lines.append("# HELP syncd_open_connections Client connections currently open.")
        lines.append("# TYPE syncd_open_connections gauge")
        lines.append("syncd_open_connections \(openConnections?() ?? 0)")
        lines.append("# HELP syncd_stable_vector_lag Change sets of each open dataset that some active replica has not acknowledged: the sum over the dataset vector's entries of vector minus stable vector.")
        lines.append("# TYPE syncd_stable_vector_lag gauge")
        for (dataset, lag) in stableVectorLags?() ?? [] {
            lines.append("syncd_stable_vector_lag{dataset=\"\(Metrics.escape(dataset))\"} \(lag)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Appends a metric with one series per dataset, datasets in name order.
    static func appendDatasetSeries(_ name: String, type: String, help: String, _ values: [String: some Numeric & CustomStringConvertible],
                                    to lines: inout [String]) {
        lines.append("# HELP \(name) \(help)")
        lines.append("# TYPE \(name) \(type)")
        for (dataset, value) in values.sorted(by: { $0.key < $1.key }) {
            lines.append("\(name){dataset=\"\(Metrics.escape(dataset))\"} \(value)")
        }
    }

    /// A bucket bound as Prometheus clients write it (`0.001`, `1`, `5`).
    static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// Escapes a label value: backslash, double quote and newline.
    static func escape(_ value: String) -> String {
        var result = ""
        for character in value {
            switch character {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result
    }
}
