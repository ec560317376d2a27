/// Every size and count limit of the legacy protocol, in one place.
/// Lengths are Unicode code points unless the name says bytes.
public enum Limits {
    /// Any single parameter, known or not, after percent-decoding (contract 7).
    public static let maxParameterBytes = 4 * 1024
    /// A request body (contract 5).
    public static let maxBodyBytes = 64 * 1024
    /// A raw query string: as many parameters as fit, encoded three bytes per byte.
    public static let maxQueryBytes = 64 * 1024
    /// How many parameters one request may carry (query and body together).
    public static let maxParameterCount = 64

    public static let nicknameLength = 1...32
    public static let topicLength = 1...100
    public static let messageLength = 1...500
    public static let lobbyUserLength = 1...64
    public static let lobbyMessageLength = 1...255

    /// `messages`: default and ceiling of `limit`; a larger limit is cut, not refused.
    public static let defaultMessageLimit = 50
    public static let maxMessageLimit = 200
    /// `messages` (both APIs) may wait this many seconds for a new message (a long poll).
    public static let maxWaitSeconds = 0...25
    /// `/messages.php` answers at most this many.
    public static let lobbyMessageLimit = 50
    /// `chats`: most rooms returned (configurable per deployment; this is the default).
    public static let defaultRoomCap = 500

    /// `participants` (and the admin API's members) consider a room's most
    /// recently active members only, at most this many: a room whose
    /// membership was grown by many sessions costs one bounded read.
    public static let maxMembersRead = 1000

    /// A `chats` query that makes the gateway's index look at more cells than
    /// this is a wide one (a phone's screen asking its zoom ±3 looks at a few
    /// hundred to about two thousand): limited per client address.
    public static let wideRegionCells = 4096

    /// A repeated `create` within this window returns the first room (contract 3).
    public static let createRetryWindowSeconds = 10

    /// Most room ids in one expiry page or removal batch (keeps records well under Kafka's 1 MB).
    public static let maxRoomBatch = 10_000
}
