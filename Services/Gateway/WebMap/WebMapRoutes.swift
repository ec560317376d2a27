import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The web map (`web/` of the repository): `/` is its page, `/map/<file>` its
/// files, `/map/leaflet/<file>` Debian's Leaflet (`libjs-leaflet`). Files are
/// read from disk on request (they are few and small, and the browser caches
/// them); a name that is not a plain relative path, or not one of the kinds of
/// file a page loads (script, style sheet, map data, image), is refused before
/// any read: the folder's README and tools are not served.
struct WebMapRoutes: Sendable {
    let webDirectory: String
    let leafletDirectory: String
    let map: MapSettings
    let logger: Logger

    func register(on router: Router<GatewayRequestContext>) {
        router.get("/") { _, _ in serve(webDirectory, "index.html") }
        let settings = map.json
        router.get("/map/settings.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-cache"],
                body: .init(byteBuffer: ByteBuffer(string: settings)))
        }
        router.get("/map/leaflet/**") { _, context in
            serve(leafletDirectory, context.parameters.getCatchAll().joined(separator: "/"))
        }
        router.get("/map/**") { _, context in
            serve(webDirectory, context.parameters.getCatchAll().joined(separator: "/"))
        }
    }

    private func serve(_ directory: String, _ name: String) -> Response {
        guard !directory.isEmpty else {
            return text(.notFound, "the web map is not installed here (GEOCHAT_WEB_DIR is not set)\n")
        }
        guard Self.isPlainPath(name), Self.isPageAsset(name),
            let data = FileManager.default.contents(atPath: directory + "/" + name)
        else {
            return text(.notFound, "not found\n")
        }
        return Response(
            status: .ok,
            headers: [.contentType: Self.contentType(name), .cacheControl: "public, max-age=300"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    private func text(_ status: HTTPResponse.Status, _ body: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// Segments of letters, digits, `.`, `-` and `_`, none starting with a dot.
    static func isPlainPath(_ name: String) -> Bool {
        let segments = name.split(separator: "/", omittingEmptySubsequences: false)
        return !segments.isEmpty && name.utf8.count <= 200
            && segments.allSatisfy { segment in
                !segment.isEmpty && segment.first != "."
                    && segment.utf8.allSatisfy {
                        $0.isLetterOrDigit || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-")
                            || $0 == UInt8(ascii: "_")
                    }
            }
    }

    /// The kinds of file the page loads; `index.html` itself only at `/`.
    static let assetExtensions: Set<String> = ["js", "css", "geojson", "png", "svg"]

    static func isPageAsset(_ name: String) -> Bool {
        guard let dot = name.lastIndex(of: "."), !name[name.index(after: dot)...].contains("/") else { return false }
        return name == "index.html" || assetExtensions.contains(String(name[name.index(after: dot)...]))
    }

    static func contentType(_ name: String) -> String {
        switch name.split(separator: ".").last.map(String.init) ?? "" {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "json", "geojson": "application/json"
        case "png": "image/png"
        case "svg": "image/svg+xml"
        default: "application/octet-stream"
        }
    }
}

extension UInt8 {
    fileprivate var isLetterOrDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }
}
