// The benchmark's reference server: Hummingbird with one route and nothing else.
// deploy/bench.sh runs it built in release mode next to the gateway, loaded the same way,
// so the gateway's poll rate can be stated as a share of what the HTTP stack alone does.
import Hummingbird

let arguments = CommandLine.arguments
let port = arguments.count > 1 ? Int(arguments[1]) ?? 8099 : 8099

let router = Router()
router.get("/hello") { _, _ in "Hello, world!\n" }
// deploy/bench-push.sh's reference for push subscribers: a stream that only keeps
// itself alive, written as Hummingbird streams a body (what one open stream costs
// the HTTP stack alone).
router.get("/events") { _, _ in
    Response(
        status: .ok, headers: [.contentType: "text/event-stream"],
        body: ResponseBody { writer in
            try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(30))
                try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
            }
            try await writer.finish(nil)
        })
}
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
