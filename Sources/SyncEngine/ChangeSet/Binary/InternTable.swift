/// Values numbered in the order they were first met, for binary formats that write a value once
/// and then refer to it by its number: the names of a stored change set (``StoredOperations``),
/// the names and replicas of a conflict journal row (``JournalTable``).
///
/// A table usually holds a handful of values (a schema's names, the replicas of one merge):
/// comparing with each is cheaper than hashing, and equal strings that share storage compare
/// at once. Values beyond the first ``linearSearchLimit`` are also found by hash.
struct InternTable<Element: Hashable> {
    /// The values, by number.
    private(set) var elements: [Element] = []
    /// The numbers of the values past ``linearSearchLimit``.
    private var numbersByHash: [Element: Int] = [:]

    private static var linearSearchLimit: Int { 16 }

    var count: Int { elements.count }

    /// The number of `element`, if it is in the table.
    func number(of element: Element) -> Int? {
        for number in 0..<min(elements.count, InternTable.linearSearchLimit) where elements[number] == element { return number }
        return elements.count > InternTable.linearSearchLimit ? numbersByHash[element] : nil
    }

    /// The number of `element`, adding it if it is new; `isNew` tells which.
    mutating func intern(_ element: Element) -> (number: Int, isNew: Bool) {
        if let number = number(of: element) { return (number, false) }
        if elements.count >= InternTable.linearSearchLimit { numbersByHash[element] = elements.count }
        elements.append(element)
        return (elements.count - 1, true)
    }
}
