/// A room's id: positive, from one database sequence, never reused.
public typealias RoomID = Int64
/// A message's id: positive, dense and strictly increasing within its room.
public typealias MessageID = Int64
