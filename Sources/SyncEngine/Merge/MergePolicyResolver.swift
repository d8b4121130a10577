import LocalStoreCore

/// The rule of the attributes with a merge policy (`@Attribute(merge:)`, CONTRACT.md §3.9):
/// their value is a function of the set of writes, not of the last one. It reads and writes
/// nothing: ``MergeEngine`` reads the current value, asks, and writes the outcome
/// (`MergeEngine+Policies.swift`); a local save asks it too, to rebase an unsaved edit on a
/// merged value (`ChangeRecorder.swift`). Counters have their own rule (``CounterResolver``).
enum MergePolicyResolver {
    /// What the attribute's policy makes of `current` and `incoming`: the larger for `.max`, the
    /// smaller for `.min` (both in SQLite's order), the type's join for `.custom`. A custom merge
    /// that cannot read the values (a value written by another version of the type), and an
    /// attribute without a policy, take `incoming` when `incomingWinsTie` (its stamp is the larger).
    static func merged(_ current: [SQLValue], _ incoming: [SQLValue], by attribute: SyncSchema.Attribute, incomingWinsTie: Bool) -> [SQLValue] {
        switch attribute.policy {
        case .max: current.precedesInSQLiteOrder(incoming) ? incoming : current
        case .min: incoming.precedesInSQLiteOrder(current) ? incoming : current
        case .custom: attribute.customMerge?(current, incoming) ?? (incomingWinsTie ? incoming : current)
        case .lastWriterWins, .counter: incomingWinsTie ? incoming : current
        }
    }
}
