/// How long a test waits for work that takes milliseconds alone: a command's
/// answer, a say's commit. Generous on purpose: `swift test` runs every suite
/// at once, and on 2 cores in a debug build the property tests can hold the
/// cooperative threads for half a minute (CI, 2026-11-26: in-memory tests
/// finished after 27–30 s, and one say missed a 30 s deadline). A test about
/// deadlines sets its own.
public enum TestPatience {
    public static let deadline: Duration = .seconds(600)
}
