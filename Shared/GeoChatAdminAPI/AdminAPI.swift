import GeoChatDomain

/// The JSON bodies of the admin HTTP API (`/admin/…` on every gateway), shared
/// by the gateway and the `geochat-admin` command line. docs/operations.md lists
/// the endpoints.
public enum AdminAPI {
    public struct LoginRequest: Codable, Sendable {
        public var name: String
        public var password: String
        public init(name: String, password: String) {
            self.name = name
            self.password = password
        }
    }

    public struct RoomsResponse: Codable, Sendable {
        public var rooms: [AdminRoom]
        public init(rooms: [AdminRoom]) { self.rooms = rooms }
    }

    public struct RoomResponse: Codable, Sendable {
        public var room: AdminRoom
        public init(room: AdminRoom) { self.room = room }
    }

    /// A page of a room's transcript, oldest first; `next` is the `after` of
    /// the following page (nil on the last).
    public struct TranscriptResponse: Codable, Sendable {
        public var room: RoomID
        public var messages: [ChatMessage]
        public var next: MessageID?
        public init(room: RoomID, messages: [ChatMessage], next: MessageID?) {
            self.room = room
            self.messages = messages
            self.next = next
        }
    }

    /// What to change of a room (absent: kept): its topic, its place (both
    /// `latitude` and `longitude`), its zoom level; `reason` for the audit.
    public struct ChangeRoomRequest: Codable, Sendable {
        public var topic: String?
        public var latitude: Double?
        public var longitude: Double?
        public var zoom: Int?
        public var reason: String?
        public init(
            topic: String? = nil, latitude: Double? = nil, longitude: Double? = nil, zoom: Int? = nil,
            reason: String? = nil
        ) {
            self.topic = topic
            self.latitude = latitude
            self.longitude = longitude
            self.zoom = zoom
            self.reason = reason
        }
    }

    /// A room as it is after an operator's change.
    public struct ChangedRoomResponse: Codable, Sendable {
        public var id: RoomID
        public var topic: String
        public var latitude: Double
        public var longitude: Double
        public var x: Double
        public var y: Double
        public var zoom: Int
        public init(_ room: RoomInfo) {
            let place = GeoPoint(room.position)
            id = room.id
            topic = room.topic
            latitude = place.latitude
            longitude = place.longitude
            x = room.position.x
            y = room.position.y
            zoom = room.zoom.value
        }
    }

    public struct RemovedResponse: Codable, Sendable {
        public var removed: RoomID
        public init(removed: RoomID) { self.removed = removed }
    }

    /// A session's messages to remove: in one room (`room`) or everywhere,
    /// stored at or after `sinceMs` (absent: all), at most `limit` a call.
    /// Whose messages: a session's (`session`), or the writer's of one message
    /// (`senderOf`, what the admin page knows); exactly one of the two.
    public struct RemoveMessagesRequest: Codable, Sendable {
        public var session: String?
        public var senderOf: MessageKey?
        public var room: Int64?
        public var sinceMs: Int64?
        public var reason: String?
        public var limit: Int?
        public init(
            session: String? = nil, senderOf: MessageKey? = nil, room: Int64? = nil, sinceMs: Int64? = nil,
            reason: String? = nil, limit: Int? = nil
        ) {
            self.session = session
            self.senderOf = senderOf
            self.room = room
            self.sinceMs = sinceMs
            self.reason = reason
            self.limit = limit
        }
    }

    /// How many messages a removal took; `more`: selected ones remain (ask again).
    public struct MessagesRemovedResponse: Codable, Sendable {
        public var removed: Int
        public var more: Bool
        public init(removed: Int, more: Bool) {
            self.removed = removed
            self.more = more
        }
    }

    /// `idleSeconds` nil: the configured idle limit.
    public struct ExpiryRunRequest: Codable, Sendable {
        public var dryRun: Bool
        public var idleSeconds: Int?
        public init(dryRun: Bool, idleSeconds: Int?) {
            self.dryRun = dryRun
            self.idleSeconds = idleSeconds
        }
    }

    public struct JobResponse: Codable, Sendable {
        public var job: ExpiryJobReport
        public init(job: ExpiryJobReport) { self.job = job }
    }

    public struct JobsResponse: Codable, Sendable {
        public var jobs: [ExpiryJobReport]
        public init(jobs: [ExpiryJobReport]) { self.jobs = jobs }
    }

    public struct SessionView: Codable, Sendable {
        public var id: String
        public var nick: String
        public var createdAtMs: Int64
        public var lastSeenAtMs: Int64
        public var banned: Bool
        public init(_ session: AdminSession, banned: Bool) {
            id = session.id
            nick = session.nick
            createdAtMs = session.createdAtMs
            lastSeenAtMs = session.lastSeenAtMs
            self.banned = banned
        }
    }

    public struct SessionsResponse: Codable, Sendable {
        public var sessions: [SessionView]
        public init(sessions: [SessionView]) { self.sessions = sessions }
    }

    public struct RenameSessionRequest: Codable, Sendable {
        public var nick: String
        public var reason: String?
        public init(nick: String, reason: String? = nil) {
            self.nick = nick
            self.reason = reason
        }
    }

    /// A session after an operator's change (its full id: the operator named it).
    public struct SessionChangedResponse: Codable, Sendable {
        public var id: String
        public var nick: String
        public var ended: Bool
        public init(_ info: SessionInfo) {
            id = info.id.value
            nick = info.nick
            ended = info.ended
        }
    }

    /// Exactly one of `nick` and `session`.
    public struct BanRequest: Codable, Sendable {
        public var nick: String?
        public var session: String?
        public var reason: String?
        public init(nick: String? = nil, session: String? = nil, reason: String? = nil) {
            self.nick = nick
            self.session = session
            self.reason = reason
        }
    }

    public struct BanResponse: Codable, Sendable {
        public var ban: Ban
        public init(ban: Ban) { self.ban = ban }
    }

    public struct BansResponse: Codable, Sendable {
        public var bans: [Ban]
        public init(bans: [Ban]) { self.bans = bans }
    }

    /// A setting: its stored value (nil: each instance uses its own configuration),
    /// the catalog's default and range, and who changed it last.
    public struct SettingView: Codable, Sendable {
        public var name: String
        public var value: Int?
        public var defaultValue: Int
        public var min: Int
        public var max: Int
        public var meaning: String
        public var updatedBy: String?
        public var updatedAtMs: Int64?

        public init(_ definition: SettingDefinition, stored: SettingValue?) {
            name = definition.name.rawValue
            value = stored?.value
            defaultValue = definition.defaultValue
            min = definition.range.lowerBound
            max = definition.range.upperBound
            meaning = definition.meaning
            updatedBy = stored?.updatedBy
            updatedAtMs = stored?.updatedAtMs
        }
    }

    public struct SettingsResponse: Codable, Sendable {
        public var settings: [SettingView]
        public init(settings: [SettingView]) { self.settings = settings }

        public init(stored: [SettingValue]) {
            settings = SettingsCatalog.all.map { definition in
                SettingView(definition, stored: stored.first { $0.name == definition.name.rawValue })
            }
        }
    }

    /// `next`: the `before` of the next (older) page; absent on the last page.
    public struct AuditResponse: Codable, Sendable {
        public var entries: [AuditEntry]
        public var next: Int64?
        public init(entries: [AuditEntry], next: Int64? = nil) {
            self.entries = entries
            self.next = next
        }
    }

    public struct LogoutResponse: Codable, Sendable {
        public var loggedOut: Bool
        public init() { loggedOut = true }
    }

    /// 409 to a run request while another run is under way (one at a time
    /// cluster-wide): that run, to wait for before asking again.
    public struct RunUnderWayResponse: Codable, Sendable {
        public var error: ErrorResponse.Body
        public var job: ExpiryJobReport
        public init(job: ExpiryJobReport) {
            error = .init(
                code: "run_under_way",
                message: "expiry job \(job.id) (\(job.trigger)) is under way; ask again when it has ended")
            self.job = job
        }
    }

    /// Every error: `{"error":{"code":"unauthorized","message":"…"}}`.
    public struct ErrorResponse: Codable, Sendable {
        public struct Body: Codable, Sendable {
            public var code: String
            public var message: String
            public init(code: String, message: String) {
                self.code = code
                self.message = message
            }
        }
        public var error: Body
        public init(code: String, message: String) { error = Body(code: code, message: message) }
    }
}
