/// A position in normalized Mercator values ("MP values"): x east from the
/// antimeridian, y south from the north edge, both in [0, 1] (contract 2).
public struct MercatorPoint: Hashable, Sendable, Codable {
    public let x: Double
    public let y: Double

    public init?(x: Double, y: Double) {
        guard Self.isValidCoordinate(x), Self.isValidCoordinate(y) else { return nil }
        self.x = x
        self.y = y
    }

    public static func isValidCoordinate(_ value: Double) -> Bool {
        value.isFinite && value >= 0 && value <= 1
    }

    /// From degrees, for tools and tests.
    public init?(longitude: Double, latitude: Double) {
        let lat = latitude * .pi / 180
        let x = (longitude + 180) / 360
        let y = (1 - _log(_tan(lat) + 1 / _cos(lat)) / .pi) / 2
        self.init(x: x, y: y)
    }
}

/// A box given by two opposite corners in any order; edges are inside.
public struct MercatorBox: Hashable, Sendable, Codable {
    public let minX: Double, minY: Double, maxX: Double, maxY: Double

    public init(_ a: MercatorPoint, _ b: MercatorPoint) {
        minX = Swift.min(a.x, b.x); maxX = Swift.max(a.x, b.x)
        minY = Swift.min(a.y, b.y); maxY = Swift.max(a.y, b.y)
    }

    public func contains(_ p: MercatorPoint) -> Bool {
        p.x >= minX && p.x <= maxX && p.y >= minY && p.y <= maxY
    }
}

#if canImport(Glibc)
import Glibc
@inline(__always) private func _log(_ v: Double) -> Double { Glibc.log(v) }
@inline(__always) private func _tan(_ v: Double) -> Double { Glibc.tan(v) }
@inline(__always) private func _cos(_ v: Double) -> Double { Glibc.cos(v) }
#else
import Darwin
@inline(__always) private func _log(_ v: Double) -> Double { Darwin.log(v) }
@inline(__always) private func _tan(_ v: Double) -> Double { Darwin.tan(v) }
@inline(__always) private func _cos(_ v: Double) -> Double { Darwin.cos(v) }
#endif
