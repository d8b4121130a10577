/// How a context's objects refer to it: one object per context, which the context empties when
/// it is deinitialized, so that an object that outlives its context finds none.
///
/// A `weak` reference from each object would do the same, but a weakly referenced object keeps
/// its reference count in a side table: every retain and release of the context, which every
/// change, insert and relationship update of its objects makes, would then go through it, and
/// every object fetched or inserted would form and later destroy a weak reference.
final class ObjectContextReference {
    /// The context, `nil` once it is deinitialized. `unowned(unsafe)` holds no count; the
    /// context's `deinit` sets it to `nil` before the memory goes, and a context is used from
    /// one thread at a time, so no reader sees it in between.
    unowned(unsafe) private(set) var context: ObjectContext?

    /// Points the reference at `context`, once it is initialized.
    func attach(_ context: ObjectContext) {
        self.context = context
    }

    /// Called by the context's `deinit`.
    func detach() {
        context = nil
    }
}
