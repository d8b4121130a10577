// Lists the public symbols declared in this repository's Sources/ that have no documentation
// comment, reading the symbol graphs scripts/docs.sh extracts. docc documents such a symbol
// without complaint, so this is the check that every public symbol has its `///`.
//
//   swift scripts/undocumented-symbols.swift .build-docs/symbol-graphs/SyncKit …
//
// Prints `path:line: public <kind> <name> has no documentation comment` for each and exits 1
// if there is any. Symbols the compiler synthesizes (Codable, Hashable, RawRepresentable
// members) have no source location and are not listed.
import Foundation

let sourcesDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    .appendingPathComponent("Sources").standardizedFileURL.path + "/"

var undocumented = Set<String>()
for directory in CommandLine.arguments.dropFirst() {
    let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".symbols.json") }
    for file in files {
        let data = try Data(contentsOf: URL(fileURLWithPath: directory).appendingPathComponent(file))
        guard let graph = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let symbols = graph["symbols"] as? [[String: Any]] else {
            FileHandle.standardError.write(Data("undocumented-symbols: \(directory)/\(file) is not a symbol graph\n".utf8))
            exit(2)
        }
        for symbol in symbols where symbol["docComment"] == nil {
            guard let location = symbol["location"] as? [String: Any],
                  let uri = location["uri"] as? String, let url = URL(string: uri),
                  url.standardizedFileURL.path.hasPrefix(sourcesDirectory) else { continue }
            let line = ((location["position"] as? [String: Any])?["line"] as? Int).map { $0 + 1 } ?? 0
            let kind = ((symbol["kind"] as? [String: Any])?["displayName"] as? String ?? "symbol").lowercased()
            let name = (symbol["pathComponents"] as? [String])?.joined(separator: ".") ?? "?"
            let path = String(url.standardizedFileURL.path.dropFirst(sourcesDirectory.count - "Sources/".count))
            undocumented.insert("\(path):\(line): public \(kind) \(name) has no documentation comment")
        }
    }
}
for entry in undocumented.sorted() { print(entry) }
exit(undocumented.isEmpty ? 0 : 1)
