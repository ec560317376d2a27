import Synchronization

/// What a ban names: a nickname (any session using it, matched without regard
/// to ASCII case, so `Bob` cannot dodge a ban on `bob`) or one session.
public struct BanTarget: Codable, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Codable, Sendable {
        case nick
        case session
    }

    public let kind: Kind
    public let value: String

    /// Nil unless the value is a valid nickname or session id.
    public init?(kind: Kind, value: String) {
        switch kind {
        case .nick: guard Nickname(value) != nil else { return nil }
        case .session: guard SessionID(value) != nil else { return nil }
        }
        self.kind = kind
        self.value = value
    }

    public static func nick(_ nick: String) -> BanTarget? { BanTarget(kind: .nick, value: nick) }
    public static func session(_ id: SessionID) -> BanTarget { BanTarget(kind: .session, value: id.value)! }

    /// The record key on `geochat.bans` and the table's key: `nick:bob`, `session:<id>`.
    public var key: String {
        switch kind {
        case .nick: "nick:" + value.lowercased()
        case .session: "session:" + value
        }
    }

    public init(from decoder: any Decoder) throws {
        struct Raw: Decodable {
            var kind: Kind
            var value: String
        }
        let raw = try Raw(from: decoder)
        guard let target = BanTarget(kind: raw.kind, value: raw.value) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not a valid \(raw.kind)"))
        }
        self = target
    }

    /// Session ids are bearer secrets: logs get a prefix only.
    public var description: String {
        switch kind {
        case .nick: "nick \(value)"
        case .session: "session \(value.prefix(6))…"
        }
    }
}
