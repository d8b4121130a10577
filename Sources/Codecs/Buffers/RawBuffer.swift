/// Growth of the raw output buffers ``JSONWriter`` and ``ByteWriter`` own: a new buffer of at
/// least `needed` bytes (double the old capacity, or more), holding the `count` bytes written.
/// Frees the old buffer. Out of line, so the writers' fast paths stay small.
@inline(never)
package func grownBuffer(_ storage: UnsafeMutablePointer<UInt8>, count: Int, capacity: inout Int, toHold needed: Int) -> UnsafeMutablePointer<UInt8> {
    let newCapacity = max(needed, capacity * 2)
    let newStorage = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
    newStorage.initialize(from: storage, count: count)
    storage.deallocate()
    capacity = newCapacity
    return newStorage
}
