import GatewayCore
import HTTPTypes
import Hummingbird

/// The admin page (`web/admin/`), on the operators' listener only, under
/// `<prefix>/admin/ui/`: the page and its files, the web map's files it
/// shares (`ui/map/…`: the base map and its settings) and Leaflet
/// (`ui/leaflet/…`). Every name is relative, so the page works under any
/// path prefix. The page is static; everything it shows comes from the admin
/// API with the operator's bearer token, never from a cookie, so no other
/// site can act through an operator's browser.
struct AdminPageRoutes: Sendable {
    /// The page's folder inside the web map's (`GEOCHAT_WEB_DIR`).
    static let folder = "admin"
    static let notInstalled = "the admin page is not installed here (GEOCHAT_WEB_DIR is not set)\n"

    let webDirectory: String
    let leafletDirectory: String
    let map: MapSettings
    let pathPrefix: String

    func register(on router: Router<GatewayRequestContext>) {
        let page = StaticFiles(
            directory: webDirectory.isEmpty ? "" : webDirectory + "/" + Self.folder, notInstalled: Self.notInstalled)
        let ui = router.group(RouterPath(pathPrefix + "/admin/ui"))
        ui.get("") { request, _ in
            // `…/ui` and `…/ui/` reach here alike; the page's relative names need the slash.
            guard request.uri.path.hasSuffix("/") else {
                return Response(status: .permanentRedirect, headers: [.location: "ui/"])
            }
            return page.serve("index.html")
        }
        WebMapRoutes.registerMapFiles(
            on: ui, map: "map", leaflet: "leaflet",
            web: StaticFiles(directory: webDirectory, notInstalled: Self.notInstalled),
            leaflet: StaticFiles(directory: leafletDirectory, notInstalled: Self.notInstalled), settings: map)
        ui.get("**") { _, context in page.serve(context.parameters.getCatchAll().joined(separator: "/")) }
    }
}
