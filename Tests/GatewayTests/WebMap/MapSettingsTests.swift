import Foundation
import GeoChatRuntime
import Testing

@testable import Gateway
@testable import GatewayCore

/// The operator's base map and geocoder: checked at start, served to the page,
/// and let through the Content-Security-Policy.
@Suite struct MapSettingsTests {
    func settings(_ environment: [String: String]) throws -> MapSettings {
        try MapSettings(Configuration(arguments: [], environment: environment))
    }

    @Test func offByDefaultTheDocumentSaysNull() throws {
        let map = try settings([:])
        let document = try JSONSerialization.jsonObject(with: Data(map.json.utf8)) as! [String: Any]
        let tiles = document["tiles"] as! [String: Any]
        #expect(tiles["url"] is NSNull && tiles["attribution"] is NSNull && tiles["maxZoom"] as? Int == 19)
        #expect((document["geocoder"] as! [String: Any])["url"] is NSNull)
        #expect(document["limits"] as? [String: Int] == ["nick": 32, "topic": 100, "message": 500])
        #expect(map.tileOrigin == nil && map.geocoderOrigin == nil)
    }

    @Test func anOperatorsTileServerAndGeocoderAreServedAndAllowedByTheCSP() throws {
        let map = try settings([
            "GEOCHAT_MAP_TILE_URL": "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
            "GEOCHAT_MAP_TILE_ATTRIBUTION": "© OpenStreetMap contributors \"quoted\"",
            "GEOCHAT_MAP_GEOCODER_URL": "https://geo.example.org:8443/search",
        ])
        let document = try JSONSerialization.jsonObject(with: Data(map.json.utf8)) as! [String: Any]
        #expect(
            (document["tiles"] as! [String: Any])["url"] as? String == "https://tile.openstreetmap.org/{z}/{x}/{y}.png")
        #expect(
            (document["tiles"] as! [String: Any])["attribution"] as? String == "© OpenStreetMap contributors \"quoted\""
        )
        #expect(map.tileOrigin == "https://tile.openstreetmap.org")
        #expect(map.geocoderOrigin == "https://geo.example.org:8443")
        let policy = SecurityHeaders<GatewayRequestContext>.contentSecurityPolicy(
            imageOrigins: [map.tileOrigin!], connectOrigins: [map.geocoderOrigin!])
        #expect(policy.contains("img-src 'self' data: https://tile.openstreetmap.org;"))
        #expect(policy.contains("connect-src 'self' https://geo.example.org:8443;"))
    }

    @Test func badSettingsStopTheStart() {
        for environment in [
            ["GEOCHAT_MAP_TILE_URL": "https://tiles.example.org/tile.png"],  // no placeholders
            ["GEOCHAT_MAP_TILE_URL": "javascript:alert(1)//{z}{x}{y}"],
            ["GEOCHAT_MAP_TILE_URL": "https://a b/{z}/{x}/{y}"],
            ["GEOCHAT_MAP_GEOCODER_URL": "ftp://geo.example.org/search"],
            ["GEOCHAT_MAP_TILE_MAX_ZOOM": "40"],
        ] {
            #expect(throws: ConfigurationError.self, "\(environment)") { try settings(environment) }
        }
    }
}
