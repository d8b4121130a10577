/// Why bytes could not be read as what was expected, and where.
package struct ByteReadError: Error, Equatable, CustomStringConvertible {
    package var message: String
    /// Byte offset of what could not be read, from the start of the input.
    package var offset: Int
    /// What was being read when it failed (`operation 7`), outermost first.
    package var context: [String] = []

    package var description: String {
        (context.isEmpty ? "" : context.joined(separator: ", ") + ": ") + "\(message) at byte \(offset)"
    }

    /// Runs `body`, adding `context` to an error it throws.
    package static func within<T>(_ context: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var error as ByteReadError {
            error.context.insert(context(), at: 0)
            throw error
        }
    }
}
