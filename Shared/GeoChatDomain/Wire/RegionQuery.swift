/// A room query: a box (edges included) and an inclusive zoom range.
public struct RegionQuery: Codable, Sendable, Equatable {
    public var box: MercatorBox
    public var zooms: ClosedRange<Int>
    public var cap: Int

    public init(box: MercatorBox, zooms: ClosedRange<Int>, cap: Int) {
        self.box = box
        self.zooms = zooms
        self.cap = cap
    }
}
