import ArgumentParser
import GeoChatAdminAPI
import GeoChatDomain

struct SettingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings", abstract: "Read or change the cluster's live settings.",
        subcommands: [Get.self, Set.self], defaultSubcommand: Get.self)

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the settings (or one).")
        @OptionGroup var connection: Connection
        @Argument(help: "One setting's name.") var name: String?

        func run() async throws {
            let all = try await connection.client().get("settings", as: AdminAPI.SettingsResponse.self).settings
            let shown = all.filter { name == nil || $0.name == name }
            if let name, shown.isEmpty { throw CLIError("no setting named \(name)") }
            Format.table(
                ["NAME", "VALUE", "DEFAULT", "RANGE", "CHANGED BY", "MEANING"],
                shown.map { setting in
                    [
                        setting.name, setting.value.map { Format.setting($0, name: setting.name) } ?? "(configured)",
                        Format.setting(setting.defaultValue, name: setting.name), "\(setting.min)…\(setting.max)",
                        setting.updatedBy ?? "", setting.meaning,
                    ]
                })
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change settings, all or nothing: NAME=VALUE … (durations like 30d, 90s for names ending in .s).")
        @OptionGroup var connection: Connection
        @Argument(help: "NAME=VALUE pairs, e.g. room.cap=200 presence.timeout.s=45s") var assignments: [String]

        func run() async throws {
            var changes: [String: Int] = [:]
            for assignment in assignments {
                let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { throw ValidationError("'\(assignment)' is not NAME=VALUE") }
                let value = parts[0].hasSuffix(".s") ? DurationText.seconds(parts[1]) : Int(parts[1])
                guard let value else {
                    throw ValidationError(
                        "'\(parts[1])' is not a number\(parts[0].hasSuffix(".s") ? " or a duration" : "")")
                }
                changes[parts[0]] = value
            }
            let all = try await connection.client().send(
                "PUT", "settings", body: changes, as: AdminAPI.SettingsResponse.self
            ).settings
            for setting in all where changes[setting.name] != nil {
                print("\(setting.name) = \(setting.value.map { Format.setting($0, name: setting.name) } ?? "?")")
            }
        }
    }
}
