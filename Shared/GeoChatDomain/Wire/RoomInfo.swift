public struct RoomInfo: Codable, Sendable, Equatable {
    public var id: RoomID
    public var position: MercatorPoint
    public var zoom: ZoomLevel
    public var topic: String

    public init(id: RoomID, position: MercatorPoint, zoom: ZoomLevel, topic: String) {
        self.id = id
        self.position = position
        self.zoom = zoom
        self.topic = topic
    }
}
