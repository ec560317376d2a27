import Foundation
import Synchronization
import Testing

@testable import GatewayCore

/// Readers of a read model run side by side; writers one at a time, seen whole.
@Suite struct ReadWriteLockedTests {
    private final class Count: Sendable {
        let atomic = Atomic(0)
        var value: Int { atomic.load(ordering: .sequentiallyConsistent) }
        func add() { atomic.add(1, ordering: .sequentiallyConsistent) }
    }

    /// Runs `body` on `count` threads of their own (not the cooperative pool,
    /// whose threads a blocked reader would hold) and waits for them all.
    private static func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let finished = Count()
        for index in 0..<count {
            Thread {
                body(index)
                finished.add()
            }.start()
        }
        while finished.value < count { usleep(1000) }
    }

    @Test func readersAreInsideTogether() {
        let locked = ReadWriteLocked(0)
        let (inside, sawTheOther) = (Count(), Count())
        Self.onThreads(2) { _ in
            locked.read { _ in
                inside.add()
                // A lock that lets one reader in at a time keeps the other out for the whole wait.
                let deadline = Date().addingTimeInterval(5)
                while inside.value < 2 && Date() < deadline { usleep(100) }
                if inside.value == 2 { sawTheOther.add() }
            }
        }
        #expect(sawTheOther.value == 2)
    }

    @Test func writersAreAloneAndReadersSeeWholeChanges() {
        struct Pair { var first = 0, second = 0 }
        let locked = ReadWriteLocked(Pair())
        let torn = Count()
        Self.onThreads(4) { thread in
            for _ in 0..<5_000 {
                if thread % 2 == 0 {
                    locked.write { pair in
                        pair.first += 1
                        pair.second = pair.first
                    }
                } else if locked.read({ $0.first != $0.second }) {
                    torn.add()
                }
            }
        }
        #expect(locked.read { $0.first } == 10_000)
        #expect(torn.value == 0)
    }
}
