import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a command with `posix_spawn` and waits for it with `waitpid`, without Foundation's
/// `Process`.
///
/// `Process` learns that a child exited from a signal handler on a global dispatch queue. Swift
/// concurrency's threads are that queue's threads, so a test that blocks every one of them (two
/// tests waiting for one lazily started server, on a 2-core machine) would wait forever for an
/// exit nobody can report. `waitpid` needs no other thread.
public enum SpawnedCommand {
    /// Runs `executable arguments` to completion; its output goes to temporary files, so a chatty
    /// command never blocks on a full pipe (and a daemon it starts cannot hold a pipe open).
    public static func run(_ executable: String, _ arguments: [String]) throws -> ProcessOutput {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("spawned-\(UUID().uuidString)").path
        let outputPath = base + ".out", errorPath = base + ".err"
        defer {
            unlink(outputPath)
            unlink(errorPath)
        }
        // The shell does the redirections: posix_spawn's file actions differ between platforms.
        let command = ([executable] + arguments).map(shellQuoted).joined(separator: " ")
            + " >" + shellQuoted(outputPath) + " 2>" + shellQuoted(errorPath) + " </dev/null"
        let words: [String] = ["/bin/sh", "-c", "exec " + command]
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { word in word.withCString { strdup($0) } } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ)
        guard spawned == 0 else {
            throw ProductProcessError("cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw ProductProcessError("waiting for \(executable): \(String(cString: strerror(errno)))") }
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import: the low seven bits are the
        // terminating signal (0 for a normal exit), the next eight the exit code.
        let exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return ProcessOutput(
            status: exitStatus,
            standardOutput: (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "")
    }

    private static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
