import Foundation
import GeoChatBus
import GeoChatDomain

enum AdminRemoval { case removed, noSuchRoom, lobby }
