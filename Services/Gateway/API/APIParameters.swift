import GatewayCore
import GeoChatDomain
import Hummingbird

/// The JSON API's query parameters, read strictly: numbers are finite decimals,
/// places are WGS 84 degrees (`latitude`/`longitude`) or normalized Mercator
/// values (`x`/`y`), and a bad value is a `400` naming the parameter. Only the
/// names its operation lists (`APIOperation`, as openapi.json documents them)
/// are read: any other is a programming error (an assertion in debug builds,
/// absent in release), so the code cannot read a parameter the document lacks.
struct APIParameters {
    private let values: [Substring: Substring]
    let operation: APIOperation

    init(_ request: Request, for operation: APIOperation) throws(ProtocolError) {
        self.operation = operation
        let query = request.uri.query ?? ""
        guard query.utf8.count <= Limits.maxQueryBytes else {
            throw ProtocolError(.tooLarge, "the query string is over \(Limits.maxQueryBytes) bytes")
        }
        var values: [Substring: Substring] = [:]
        for (name, value) in request.uri.queryParameters where values[name] == nil { values[name] = value }
        guard values.count <= Limits.maxParameterCount else {
            throw ProtocolError(.tooLarge, "more than \(Limits.maxParameterCount) parameters")
        }
        self.values = values
    }

    private func value(_ name: String) -> Substring? {
        guard operation.reads(name) else {
            assertionFailure("'\(name)' is not a parameter of \(operation.id) (APIOperation, openapi.json)")
            return nil
        }
        return values[Substring(name)]
    }

    func has(_ name: String) -> Bool { value(name) != nil }

    func number(_ name: String) throws(ProtocolError) -> Double? {
        guard let raw = value(name) else { return nil }
        guard MercatorPoint.isDecimalSpelling(raw), let value = Double(raw), value.isFinite else {
            throw .bad(name, "must be a decimal number")
        }
        return value
    }

    func integer(_ name: String, in range: ClosedRange<Int>) throws(ProtocolError) -> Int? {
        guard let raw = value(name) else { return nil }
        guard let value = Int(raw), range.contains(value) else {
            throw .bad(name, "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    func choice(_ name: String, of choices: [String]) throws(ProtocolError) -> String? {
        guard let raw = value(name) else { return nil }
        guard choices.contains(String(raw)) else {
            throw .bad(name, "must be one of: \(choices.joined(separator: ", "))")
        }
        return String(raw)
    }

    func messageID(_ name: String) throws(ProtocolError) -> MessageID {
        guard let raw = value(name) else { return 0 }
        guard let id = Int64(raw), id >= 0 else { throw .bad(name, "is not a message id (0 or more)") }
        return MessageID(id)
    }

    /// `minZoom`…`maxZoom`, each 0…17 (defaults: all of them).
    func zooms() throws(ProtocolError) -> ClosedRange<Int> {
        let low = try integer("minZoom", in: ZoomLevel.range) ?? ZoomLevel.range.lowerBound
        let high = try integer("maxZoom", in: ZoomLevel.range) ?? ZoomLevel.range.upperBound
        guard low <= high else { throw .bad("minZoom", "is greater than maxZoom") }
        return low...high
    }

    /// A point: `latitude` and `longitude`, or `x` and `y`.
    func place() throws(ProtocolError) -> GeoPoint {
        try APIPlaces.place(
            latitude: try number("latitude"), longitude: try number("longitude"), x: try number("x"), y: try number("y")
        )
    }

    /// A box: `south`, `west`, `north`, `east` in degrees (latitudes beyond the
    /// map's ±85.0511° are taken as its edge), or the corners `x1`, `y1`, `x2`, `y2`.
    func box() throws(ProtocolError) -> MercatorBox {
        if has("x1") || has("y1") || has("x2") || has("y2") {
            func corner(_ name: String) throws(ProtocolError) -> Double {
                guard let value = try number(name) else { throw .missing(name) }
                guard MercatorPoint.isValidCoordinate(value) else { throw .bad(name, "must be from 0 to 1") }
                return value
            }
            return MercatorBox(
                MercatorPoint(x: try corner("x1"), y: try corner("y1"))!,
                MercatorPoint(x: try corner("x2"), y: try corner("y2"))!)
        }
        func edge(_ name: String, _ range: ClosedRange<Double>) throws(ProtocolError) -> Double {
            guard let value = try number(name) else { throw .missing(name) }
            guard range.contains(value) else {
                throw .bad(name, "must be from \(range.lowerBound) to \(range.upperBound)")
            }
            return value
        }
        let south = try edge("south", -90...90)
        let north = try edge("north", -90...90)
        let west = try edge("west", -180...180)
        let east = try edge("east", -180...180)
        guard south <= north else { throw .bad("south", "is north of 'north'") }
        guard west <= east else {
            throw .bad("west", "is east of 'east'; ask for a box across the antimeridian as two boxes")
        }
        let limit = Coordinates.maxLatitude
        return MercatorBox(
            GeoPoint(latitude: min(max(south, -limit), limit), longitude: west)!.mercator,
            GeoPoint(latitude: min(max(north, -limit), limit), longitude: east)!.mercator)
    }

}
