import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Timing, memory readings and the result table shared by every benchmark.

/// Runs `body` once and returns how long it took, in seconds, on a monotonic clock (wall-clock
/// time can jump; a benchmark must not).
func measureSeconds(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try body()
    return (clock.now - start).seconds
}

extension Duration {
    /// The duration as a floating-point number of seconds.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

/// The timings of one workload done both ways: by LocalStore and by the raw SQLite C API.
struct ComparisonResult {
    /// What was measured, e.g. `"insert"`.
    let workload: String
    /// Objects (rows) handled per run.
    let rows: Int
    /// Seconds per run, LocalStore.
    var localStore: [Double] = []
    /// Seconds per run, raw C API.
    var raw: [Double] = []

    /// LocalStore rows per second in its best run.
    var localStoreRate: Double { Double(rows) / (localStore.min() ?? .infinity) }
    /// Raw C API rows per second in its best run.
    var rawRate: Double { Double(rows) / (raw.min() ?? .infinity) }
    /// LocalStore's rate as a fraction of the raw rate: 1 means as fast, 0.5 half as fast.
    var ratio: Double { localStoreRate / rawRate }
}

/// Prints results in one fixed layout, so runs can be compared line by line.
enum ResultTable {
    /// Prints one line per workload: rows/s of each side (best run), the ratio, and the median
    /// seconds of each side so the spread between runs stays visible.
    static func print(_ results: [ComparisonResult], repeats: Int) {
        Swift.print("best of \(repeats) run(s); ratio = LocalStore rows/s / raw C API rows/s")
        Swift.print(line("workload", "rows", "LocalStore rows/s", "raw C rows/s", "ratio", "median s (LS / raw)"))
        for result in results {
            Swift.print(line(
                result.workload, grouped(result.rows),
                grouped(Int(result.localStoreRate.rounded())), grouped(Int(result.rawRate.rounded())),
                String(format: "%.2fx", result.ratio),
                String(format: "%.3f / %.3f", median(result.localStore), median(result.raw))))
        }
    }

    private static func line(_ columns: String...) -> String {
        let widths = [10, 9, 18, 14, 7, 20]
        return zip(columns, widths).enumerated().map { index, pair in
            index == 0 ? pad(pair.0, to: pair.1, right: false) : pad(pair.0, to: pair.1, right: true)
        }.joined(separator: " ")
    }
}

/// `text` padded with spaces to `width`, aligned right or left.
func pad(_ text: String, to width: Int, right: Bool) -> String {
    let padding = String(repeating: " ", count: max(0, width - text.count))
    return right ? padding + text : text + padding
}

/// `1234567` as `"1,234,567"`, so large rates read at a glance.
func grouped(_ number: Int) -> String {
    let digits = String(number.magnitude)
    var result = ""
    for (index, digit) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
        result.append(digit)
    }
    return number < 0 ? "-" + result : result
}

/// The median of `values` (the mean of the middle two for an even count); 0 when empty.
func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Resident memory of this process.
enum ProcessMemory {
    /// Bytes resident now: `/proc/self/statm` on Linux (its second field, in pages);
    /// elsewhere the peak from `getrusage`, the closest portable reading.
    static func currentBytes() -> Int {
        #if os(Linux)
        if let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) {
            let fields = text.split(separator: " ")
            if fields.count > 1, let pages = Int(fields[1]) { return pages * Int(sysconf(Int32(_SC_PAGESIZE))) }
        }
        #endif
        return peakBytes()
    }

    /// The most bytes ever resident, from `getrusage` (kilobytes on Linux, bytes on Darwin).
    static func peakBytes() -> Int {
        var usage = rusage()
        #if os(Linux)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        #if canImport(Darwin)
        return Int(usage.ru_maxrss)
        #else
        return Int(usage.ru_maxrss) * 1024
        #endif
    }
}

/// `bytes` in mebibytes with one decimal, e.g. `"41.3 MiB"`.
func mebibytes(_ bytes: Int) -> String {
    String(format: "%.1f MiB", Double(bytes) / 1_048_576)
}

/// A fresh path for a benchmark store file in the temporary directory.
func temporaryStorePath(_ label: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("localstore-bench-\(label)-\(UUID().uuidString).sqlite").path
}

/// Deletes a store file and its WAL companions.
func removeStoreFile(_ path: String) {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}
