import Foundation
import GeoChatBus
import GeoChatDomain

enum RoomRules {
    /// A room's last visit is written again only once it is this old: says
    /// visit their room on every post, and expiry counts idle time in days.
    static let visitResolution: Duration = .seconds(60)
}
