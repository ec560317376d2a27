#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value that many readers look at side by side while one writer at a time
/// changes it: a read model whose queries far outnumber its updates. A `Mutex`
/// would queue the event loops' queries behind one another (on Linux a
/// contended `Mutex` goes through the kernel's priority-inheriting futex:
/// docs/benchmarks.md, `chats` over a million rooms).
///
/// Writers go first: readers that never pause (a region query on every event
/// loop) must not hold an event back. Neither kind may take the lock again
/// inside its body.
package final class ReadWriteLocked<Value: Sendable>: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
    /// Apart from the class so a reader borrows it in place, with no copy.
    private let value = UnsafeMutablePointer<Value>.allocate(capacity: 1)

    package init(_ initial: Value) {
        value.initialize(to: initial)
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        #if canImport(Glibc)
            pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        #endif
        let made = pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
        precondition(made == 0, "pthread_rwlock_init failed: \(made)")
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    package func read<Result>(_ body: (borrowing Value) throws -> Result) rethrows -> Result {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(value.pointee)
    }

    package func write<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&value.pointee)
    }
}
