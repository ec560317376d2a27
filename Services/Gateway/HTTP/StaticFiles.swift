import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// A folder of a page's files (the web map's, the admin page's), read from
/// disk on request: they are few and small, and the browser caches them. A
/// name that is not a plain relative path, or not a kind of file a page loads
/// (script, style sheet, map data, image, the page itself), is refused before
/// any read, so a folder's README and tools are not served.
struct StaticFiles: Sendable {
    let directory: String
    /// What a missing folder answers (which setting installs it).
    let notInstalled: String

    func serve(_ name: String) -> Response {
        guard !directory.isEmpty else { return Self.text(.notFound, notInstalled) }
        guard Self.isPlainPath(name), Self.isPageAsset(name),
            let data = FileManager.default.contents(atPath: directory + "/" + name)
        else {
            return Self.notFound
        }
        return Response(
            status: .ok,
            headers: [.contentType: Self.contentType(name), .cacheControl: "public, max-age=300"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static var notFound: Response { text(.notFound, "not found\n") }

    static func text(_ status: HTTPResponse.Status, _ body: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    static func json(_ body: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-cache"],
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

    /// The kinds of file a page loads; of HTML, only a folder's `index.html`.
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
