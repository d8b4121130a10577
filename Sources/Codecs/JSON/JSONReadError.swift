/// Why ``JSONReader`` could not read a document, and where: the path of the value (for example
/// `changeSets[3].operations[7].values[0]`) and the byte offset in the input.
///
/// The reader throws it with an empty path; each level of the code decoding the document adds
/// its own key or index on the way out (``at(_:_:)``), so building the path costs nothing
/// unless something is wrong.
package struct JSONReadError: Error, CustomStringConvertible, Sendable {
    /// One step of a path: an object key or an array index.
    package enum PathComponent: Sendable {
        case key(String)
        case index(Int)
    }

    /// What was wrong, e.g. `expected an integer, found a string`.
    package var message: String
    /// Where in the input (bytes from the start) it was found.
    package var offset: Int
    /// The value it concerns, outermost step first; empty for the document itself.
    package var path: [PathComponent] = []

    /// An error at `offset`, with the path still to be added by the callers decoding the document.
    package init(message: String, offset: Int, path: [PathComponent] = []) {
        self.message = message
        self.offset = offset
        self.path = path
    }

    /// The path as it would be written in code: `changeSets[3].operations[7].values[0]`, or
    /// `top level` for the document itself.
    package var pathDescription: String {
        guard !path.isEmpty else { return "top level" }
        var text = ""
        for component in path {
            switch component {
            case .key(let key): text += text.isEmpty ? key : "." + key
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    /// `path: message`. The path says where; only an error about the document itself (empty
    /// path: truncated input, trailing bytes) adds the byte offset, which otherwise would
    /// depend on how the sender laid the JSON out (key order, whitespace) and so make the same
    /// mistake read differently.
    package var description: String {
        path.isEmpty ? "top level: \(message) (at byte \(offset))" : "\(pathDescription): \(message)"
    }

    /// This error, one level further out: `component` becomes the first step of its path.
    package func within(_ component: PathComponent) -> JSONReadError {
        var error = self
        error.path.insert(component, at: 0)
        return error
    }

    /// Runs `body`, adding `component` to the path of the ``JSONReadError`` it throws, if any.
    /// The component is only made when there is an error.
    @inline(__always)
    package static func at<Result>(_ component: @autoclosure () -> PathComponent, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as JSONReadError {
            throw error.within(component())
        }
    }

    /// An error for a key that appears twice in one object, if `existing` (the value read for
    /// it before) is set. Readers disagree on which of two values wins, so such a document is
    /// ambiguous and refused.
    package static func checkFirst<Value>(_ existing: Value?, _ key: StaticString, _ reader: JSONReader) throws {
        if existing != nil { throw reader.failure("the key '\(key)' appears twice") }
    }
}
