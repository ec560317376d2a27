import GatewayCore
import Hummingbird
import Logging

/// The web map (`web/` of the repository): `/` is its page, `/map/<file>` its
/// files (`StaticFiles`), `/map/leaflet/<file>` Debian's Leaflet
/// (`libjs-leaflet`). The admin page's folder (`web/admin/`) is not served
/// here: only the operators' listener serves it (`AdminPageRoutes`).
struct WebMapRoutes: Sendable {
    let webDirectory: String
    let leafletDirectory: String
    let map: MapSettings
    let logger: Logger

    static let notInstalled = "the web map is not installed here (GEOCHAT_WEB_DIR is not set)\n"

    func register(on router: Router<GatewayRequestContext>) {
        let web = StaticFiles(directory: webDirectory, notInstalled: Self.notInstalled)
        let leaflet = StaticFiles(directory: leafletDirectory, notInstalled: Self.notInstalled)
        router.get("/") { _, _ in web.serve("index.html") }
        let settings = map.json
        router.get("/map/settings.json") { _, _ in StaticFiles.json(settings) }
        router.get("/map/leaflet/**") { _, context in
            leaflet.serve(context.parameters.getCatchAll().joined(separator: "/"))
        }
        router.get("/map/**") { _, context in
            let name = context.parameters.getCatchAll().joined(separator: "/")
            return Self.isMapFile(name) ? web.serve(name) : StaticFiles.text(.notFound, "not found\n")
        }
    }

    /// A file of the public page: not the admin page's.
    static func isMapFile(_ name: String) -> Bool {
        StaticFiles.isPageAsset(name) && !name.hasPrefix(AdminPageRoutes.folder + "/")
    }
}
