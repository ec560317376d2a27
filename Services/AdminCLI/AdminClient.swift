import ArgumentParser
import Foundation
import GeoChatAdminAPI
import GeoChatDomain

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// HTTP to a gateway's admin API: JSON bodies, the bearer token, errors as
/// the API's `{"error":{…}}` turned into readable messages.
struct AdminClient {
    let baseURL: String
    let token: String?

    init(url: String?, credentials: Credentials?) throws {
        let environment = ProcessInfo.processInfo.environment
        guard let base = url ?? environment["GEOCHAT_ADMIN_URL"] ?? credentials?.url else {
            throw CLIError("no gateway URL: give --url, set GEOCHAT_ADMIN_URL, or log in first")
        }
        var trimmed = base
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        baseURL = trimmed
        token = environment["GEOCHAT_ADMIN_TOKEN"] ?? credentials?.token
    }

    func get<T: Decodable>(_ path: String, as type: T.Type) async throws -> T {
        try await send("GET", path, body: Optional<Int>.none, as: type)
    }

    /// A removal or an ending, with the operator's reason (for the audit log) when one is given.
    func delete<T: Decodable>(_ path: String, reason: String, as type: T.Type) async throws -> T {
        try await send(
            "DELETE", path + (reason.isEmpty ? "" : "?reason=" + Format.query(reason)), body: Optional<Int>.none,
            as: type)
    }

    func send<Body: Encodable, T: Decodable>(_ method: String, _ path: String, body: Body?, as type: T.Type)
        async throws -> T
    {
        let (data, status) = try await exchange(method, path, body: body)
        return try decode(data, status: status, as: type)
    }

    /// The raw status and body, for callers that handle some errors themselves.
    func exchange<Body: Encodable>(_ method: String, _ path: String, body: Body?) async throws -> (Data, Int) {
        guard let url = URL(string: baseURL + "/admin/" + path) else {
            throw CLIError("not a URL: \(baseURL)/admin/\(path)")
        }
        var request = URLRequest(url: url, timeoutInterval: 30)
        request.httpMethod = method
        if let token { request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization") }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONEncoder().encode(body)
        }
        return try await Self.perform(request)
    }

    func decode<T: Decodable>(_ data: Data, status: Int, as type: T.Type) throws -> T {
        guard (200..<300).contains(status) else {
            let message =
                (try? JSONDecoder().decode(AdminAPI.ErrorResponse.self, from: data))
                .map { "\($0.error.message) (\(status) \($0.error.code))" } ?? "HTTP \(status)"
            if status == 401 { throw CLIError(message + "; log in with: geochat-admin login --url URL --name NAME") }
            throw CLIError(message)
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw CLIError("unexpected answer from \(baseURL): \(error)")
        }
    }

    private static func perform(_ request: URLRequest) async throws -> (Data, Int) {
        try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(
                        throwing: CLIError(
                            "cannot reach \(request.url?.absoluteString ?? "?"): \(error.localizedDescription)"))
                } else {
                    continuation.resume(returning: (data ?? Data(), (response as? HTTPURLResponse)?.statusCode ?? 0))
                }
            }.resume()
        }
    }
}

/// Options every command that talks to a gateway takes.
struct Connection: ParsableArguments {
    @Option(help: "The gateway, e.g. http://127.0.0.1:8080 (default: GEOCHAT_ADMIN_URL, else the one logged in to).")
    var url: String?

    func client() throws -> AdminClient {
        try AdminClient(url: url, credentials: try CredentialStore.load())
    }
}

struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
