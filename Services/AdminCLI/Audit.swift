import ArgumentParser
import Foundation
import GeoChatAdminAPI
import GeoChatDomain

struct Audit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the audit log, newest first, a page at a time.")
    @OptionGroup var connection: Connection
    @Option(help: "At most this many rows.") var limit = 50
    @Option(help: "Only rows older than this row id (the next page: the id printed after a full page).") var before:
        Int64?
    @Option(help: "Only rows of this admin (or \"(invalid name)\", \"-\").") var actor: String?
    @Option(help: "Only this action (login, logout, ban, unban, settings, remove-room, expiry-run, bootstrap-admin).")
    var action: String?
    @Option(help: "Only this outcome (ok, denied, refused, failed, throttled).") var outcome: String?

    func run() async throws {
        var path = "audit?limit=\(limit)"
        if let before { path += "&before=\(before)" }
        for (name, value) in [("actor", actor), ("action", action), ("outcome", outcome)] {
            if let value { path += "&\(name)=" + Format.query(value) }
        }
        let page = try await connection.client().get(path, as: AdminAPI.AuditResponse.self)
        Format.table(
            ["ID", "TIME", "ADMIN", "ACTION", "TARGET", "OUTCOME", "DETAIL"],
            page.entries.map {
                [
                    $0.id.map(String.init) ?? "", Format.time($0.atMs ?? 0), $0.actor, $0.action, $0.target, $0.outcome,
                    $0.detail,
                ]
            })
        if let next = page.next { print("more: --before \(next)") }
    }
}
