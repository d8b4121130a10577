import Foundation

/// What the relationship count rules (`minCount`, `maxCount`) of the materialization in progress
/// gather (`MergeEngine+Counts.swift`).
struct CountChecks {
    /// Per object and relationship with a `maxCount`, how many members linked by this batch the
    /// last materialization hid; a record edit counts them as members (see ``RecordEditor/checkSaveRules()``).
    var hiddenByMaxCount: [ObjectKey: [String: Int]] = [:]
    /// The ranked sources at each bounded target, per relationship: every member of a group asks
    /// for the same ranking, which the edges (unchanged while rows are written) decide.
    var rankedSourcesByTarget: [ObjectKey: [String: [RelationshipResolver.Claim]]] = [:]
    /// Per affected object and relationship with a `minCount`, its member count before materializing.
    var countsBeforeMaterializing: [ObjectKey: [String: Int]] = [:]
}
