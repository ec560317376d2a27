// The benchmark's reference server: Hummingbird with one route and nothing else.
// deploy/bench.sh runs it built in release mode next to the gateway, loaded the same way,
// so the gateway's poll rate can be stated as a share of what the HTTP stack alone does.
import Hummingbird

let arguments = CommandLine.arguments
let port = arguments.count > 1 ? Int(arguments[1]) ?? 8099 : 8099

let router = Router()
router.get("/hello") { _, _ in "Hello, world!\n" }
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
