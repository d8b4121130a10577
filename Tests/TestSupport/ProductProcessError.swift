/// A built product could not be found, did not start, did not finish in time, or failed.
public struct ProductProcessError: Error, CustomStringConvertible {
    /// What went wrong, naming the command.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
