import Foundation
import GatewayCore
import GeoChatDomain
import GeoChatRuntime

/// What the operator sets for the web map, served to the page as
/// `/map/settings.json`: a base-map tile server (off: the offline land map
/// that ships in web/), a place-search geocoder (Nominatim-compatible; off by
/// default), and the text limits the page shows as the user types. The tile
/// and geocoder origins join the Content-Security-Policy (`SecurityHeaders`).
struct MapSettings: Sendable, Equatable {
    /// A Leaflet tile template with `{z}`, `{x}` and `{y}`, e.g.
    /// `https://tile.openstreetmap.org/{z}/{x}/{y}.png`; nil: offline map.
    var tileURL: String?
    var tileAttribution: String?
    var tileMaxZoom: Int
    /// A Nominatim-compatible search endpoint (`…/search`); nil: no place search.
    var geocoderURL: String?

    init(tileURL: String? = nil, tileAttribution: String? = nil, tileMaxZoom: Int = 19, geocoderURL: String? = nil) {
        self.tileURL = tileURL
        self.tileAttribution = tileAttribution
        self.tileMaxZoom = tileMaxZoom
        self.geocoderURL = geocoderURL
    }

    /// `map.tile.url`, `map.tile.attribution`, `map.tile.max.zoom`, `map.geocoder.url`.
    init(_ configuration: Configuration) throws {
        tileURL = configuration.string("map.tile.url").flatMap { $0.isEmpty ? nil : $0 }
        tileAttribution = configuration.string("map.tile.attribution").flatMap { $0.isEmpty ? nil : $0 }
        tileMaxZoom = try configuration.int("map.tile.max.zoom", default: 19)
        geocoderURL = configuration.string("map.geocoder.url").flatMap { $0.isEmpty ? nil : $0 }
        if let tileURL {
            guard Self.origin(of: tileURL) != nil, ["{z}", "{x}", "{y}"].allSatisfy(tileURL.contains) else {
                throw ConfigurationError(
                    key: "map.tile.url", value: tileURL, expected: "an http(s) URL with {z}, {x} and {y}")
            }
        }
        if let geocoderURL, Self.origin(of: geocoderURL) == nil {
            throw ConfigurationError(key: "map.geocoder.url", value: geocoderURL, expected: "an http(s) URL")
        }
        guard (1...22).contains(tileMaxZoom) else {
            throw ConfigurationError(key: "map.tile.max.zoom", value: String(tileMaxZoom), expected: "1 to 22")
        }
    }

    /// `scheme://host[:port]` of an http(s) URL, as a CSP source; nil for
    /// anything else (a template's placeholders may be in its path only).
    static func origin(of url: String) -> String? {
        let escaped = url.replacingOccurrences(of: "{", with: "%7B").replacingOccurrences(of: "}", with: "%7D")
        guard let components = URLComponents(string: escaped),
            let scheme = components.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let host = components.host?.lowercased(), !host.isEmpty,
            host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" })
        else { return nil }
        return "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
    }

    var tileOrigin: String? { tileURL.flatMap(Self.origin) }
    var geocoderOrigin: String? { geocoderURL.flatMap(Self.origin) }

    /// The page's settings document.
    var json: String {
        func string(_ value: String?) -> String { value.map { APIJSON.text($0) } ?? "null" }
        return """
            {"geocoder":{"url":\(string(geocoderURL))},\
            "limits":{"message":\(Limits.messageLength.upperBound),"nick":\(Limits.nicknameLength.upperBound),"topic":\(Limits.topicLength.upperBound)},\
            "tiles":{"attribution":\(string(tileAttribution)),"maxZoom":\(tileMaxZoom),"url":\(string(tileURL))}}
            """
    }
}
