import Hummingbird
import NIOCore

/// The admin API's contract: `admin-openapi.json` beside this file (OpenAPI
/// 3.1, paths relative to `<prefix>/admin`), compiled into the gateway by
/// SwiftPM (`.embedInCode` in Package.swift) and served as it is, without a
/// token, at `<prefix>/admin/openapi.json` on the operators' listener. The
/// routes (`AdminRoutes`), the parameters the endpoints check, their answers
/// and the models' JSON are held to it by `AdminOpenAPISpecTests`.
enum AdminOpenAPISpec {
    /// The document's bytes, unchanged.
    static var bytes: [UInt8] { PackageResources.admin_openapi_json }

    static var response: Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
