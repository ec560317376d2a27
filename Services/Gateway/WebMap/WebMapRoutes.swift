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
        router.get("/") { _, _ in web.serve("index.html") }
        Self.registerMapFiles(
            on: router, map: "/map", leaflet: "/map/leaflet", web: web,
            leaflet: StaticFiles(directory: leafletDirectory, notInstalled: Self.notInstalled), settings: map)
    }

    /// The map's files a page loads: `<map>/settings.json`, `<map>/<file>` (not
    /// the admin page's) and Leaflet's `<leaflet>/<file>`. The web map's and the admin page's.
    static func registerMapFiles(
        on routes: some RouterMethods<GatewayRequestContext>, map: String, leaflet leafletPath: String,
        web: StaticFiles, leaflet: StaticFiles, settings: MapSettings
    ) {
        let json = settings.json
        routes.get(RouterPath(map + "/settings.json")) { _, _ in StaticFiles.json(json) }
        routes.get(RouterPath(leafletPath + "/**")) { _, context in
            leaflet.serve(context.parameters.getCatchAll().joined(separator: "/"))
        }
        routes.get(RouterPath(map + "/**")) { _, context in
            let name = context.parameters.getCatchAll().joined(separator: "/")
            return isMapFile(name) ? web.serve(name) : StaticFiles.notFound
        }
    }

    /// A file of the public page: not the admin page's.
    static func isMapFile(_ name: String) -> Bool {
        StaticFiles.isPageAsset(name) && !name.hasPrefix(AdminPageRoutes.folder + "/")
    }
}
