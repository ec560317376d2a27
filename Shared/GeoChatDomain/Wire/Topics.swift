/// Kafka topic names. docs/architecture.md describes keys, partitioning and schemas.
public enum Topics {
    /// Commands to the session service, keyed by session id (start: by idempotency key).
    public static let sessionCommands = "geochat.session.commands"
    /// Session lifecycle events, keyed by session id.
    public static let sessionEvents = "geochat.session.events"
    /// Commands to the rooms service, keyed by room id (create: by the creator's session id).
    public static let roomsCommands = "geochat.rooms.commands"
    /// Room events (created, removed, joined, left), keyed by room id.
    public static let roomEvents = "geochat.rooms.events"
    /// Commands to the messaging service, keyed by room id.
    public static let messagingCommands = "geochat.messaging.commands"
    /// Every stored message, keyed by room id, in the room's id order.
    public static let messageEvents = "geochat.messages.events"
    /// Commands to the expiry service (start a run, read jobs), keyed by `expiry`.
    public static let expiryCommands = "geochat.expiry.commands"
    /// Administration commands to the session service (login, tokens, bans, settings, audit), keyed by admin name or token hash.
    public static let adminCommands = "geochat.admin.commands"
    /// Current settings, keyed by setting name; read from the beginning by every instance (latest version wins).
    public static let settings = "geochat.settings"
    /// Bans and lifted bans, keyed by `nick:<name>` / `session:<id>`; read from the beginning by every gateway.
    public static let bans = "geochat.bans"
    /// Signs of life seen by gateways, batched, keyed by gateway instance.
    public static let presence = "geochat.presence"

    /// Each requesting instance's private reply topic (one partition). On a
    /// broker that cannot trim topics (Tansu) a requester moves to a new one now
    /// and then and deletes the old (`KafkaCommandBus`): generation 0 is the
    /// plain name, generation n > 0 ends in `.r<n>`.
    public static func replies(instance: String, generation: Int = 0) -> String {
        generation == 0 ? repliesPrefix + instance : repliesPrefix + instance + ".r\(generation)"
    }

    /// True for a requester's reply topic: the only topics a command's
    /// `replyTo` may name. A writer of a command topic could otherwise have
    /// the owner write its reply into any topic the owner may write (an event
    /// topic, settings, bans).
    public static func isReplyTopic(_ topic: String) -> Bool {
        topic.hasPrefix(repliesPrefix) && topic.utf8.count > repliesPrefix.utf8.count
    }

    /// The instance a reply topic belongs to, whatever its generation.
    public static func requester(ofReplyTopic topic: String) -> String {
        let instance = topic.hasPrefix(repliesPrefix) ? topic.dropFirst(repliesPrefix.count) : Substring(topic)
        if let dot = instance.lastIndex(of: "."), instance[dot...].dropFirst().first == "r",
            Int(instance[dot...].dropFirst(2)) != nil
        {
            return String(instance[..<dot])
        }
        return String(instance)
    }

    static let repliesPrefix = "geochat.replies."

    /// How long a topic's records matter (docs/operations.md, "Production"):
    /// its retention follows.
    public enum Kind: Sendable {
        /// Commands, replies and presence: read within seconds, then useless.
        case transient
        /// Events: read by whoever follows them; kept for consumers that were away.
        case events
        /// The latest record of each key is the state (settings, bans): compacted, kept for ever.
        case state
    }

    public static func kind(of topic: String) -> Kind {
        switch topic {
        case settings, bans: .state
        case sessionEvents, roomEvents, messageEvents: .events
        default: .transient
        }
    }

    /// *tansu*: the topics every say, create, start or presence batch writes
    /// to, which a broker that never trims a topic must see rotated
    /// (`TopicGenerations`; docs/architecture.md, "Topic generations"). The
    /// state topics are read from their start and the rare commands (admin,
    /// expiry) stay small; reply topics rotate by their own count.
    public static func rotates(_ topic: String) -> Bool {
        switch topic {
        case sessionCommands, sessionEvents, roomsCommands, roomEvents, messagingCommands, messageEvents, presence: true
        default: false
        }
    }

    /// The shared topics every service creates at start.
    public static let shared = [
        sessionCommands, sessionEvents, roomsCommands, roomEvents, messagingCommands, messageEvents, expiryCommands,
        presence, adminCommands, settings, bans,
    ]
}

/// Consumer groups: the members of one group share a topic's partitions, so
/// each record is handled by one instance of the service.
public enum ConsumerGroups {
    public static let sessionCommands = "geochat-session"
    public static let sessionPresence = "geochat-session-presence"
    public static let adminCommands = "geochat-session-admin"
    public static let roomsCommands = "geochat-rooms"
    /// Session renames and ends, which rename and end memberships (`SessionMembershipFeed`;
    /// named when it also read the messages, as visits and joins).
    public static let roomsActivity = "geochat-rooms-activity"
    public static let messagingCommands = "geochat-messaging"
    /// Room removals, whose messages messaging deletes.
    public static let messagingRoomEvents = "geochat-messaging-rooms"
    public static let expiryCommands = "geochat-expiry"
}
