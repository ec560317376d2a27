/// The JSON API's contract: `openapi.json` beside this file (OpenAPI 3.1),
/// compiled into the gateway by SwiftPM (`.embedInCode` in Package.swift) and
/// served as it is at `/api/v1/openapi.json`. It is the one source: the routes
/// (`APIOperation`), the parameters the handlers read and the models' JSON are
/// held to it by `OpenAPISpecTests`, and CI runs schemathesis against the live
/// stack with it (deploy/test.sh).
enum OpenAPISpec {
    /// The document's bytes, unchanged.
    static var bytes: [UInt8] { PackageResources.openapi_json }
}
