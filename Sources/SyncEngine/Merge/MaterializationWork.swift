import Foundation

/// What the batch's operations left for ``MergeEngine/materialize()`` to do: the objects whose
/// rows, relationships and positions must be rewritten from the metadata, and the delete roots
/// whose rules must be judged again.
struct MaterializationWork {
    /// Objects whose rows and relationships are rewritten.
    var affected: Set<ObjectKey> = []
    /// Objects whose ordered relationships need their positions rewritten.
    var reorderedOwners: Set<ObjectKey> = []
    /// Objects whose stored attribute values a remote write changed.
    var rewrittenAttributes: Set<UUID> = []
    /// Delete roots whose cascades and denials are judged again.
    var touchedRoots: Set<DeleteRoot> = []
}
