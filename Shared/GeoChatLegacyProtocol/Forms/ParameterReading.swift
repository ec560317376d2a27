import GeoChatDomain

/// Typed reads of legacy parameters, each with the contract's error for a bad value.
extension FormParameters {
    public func required(_ names: [String]) throws(ProtocolError) -> String {
        guard let value = try text(names) else { throw .missing(names[0]) }
        return value
    }

    /// A parameter without aliases (no array to make on the poll path).
    public func required(_ name: String) throws(ProtocolError) -> String {
        guard let value = try text(name) else { throw .missing(name) }
        return value
    }

    /// A session id that could be one we issued; whether it is live is the directory's call.
    public func session() throws(ProtocolError) -> SessionID {
        guard let id = SessionID(try required("sessionid")) else { throw .invalidSession }
        return id
    }

    /// A `sessionid` given with any request, as a hint of presence only: nil
    /// when absent or malformed (commands that need a session check it themselves).
    public func sessionHint() -> SessionID? {
        guard let raw = try? text("sessionid") else { return nil }
        return SessionID(raw)
    }

    public func nickname(_ name: String) throws(ProtocolError) -> Nickname {
        guard let nick = Nickname(try required(name)) else { throw .invalidNick }
        return nick
    }

    /// A room id: a decimal integer. One that names no room is `no_such_chat` later.
    public func room() throws(ProtocolError) -> RoomID {
        let raw = try required("chatid")
        guard let id = Int64(raw) else { throw .bad("chatid", "is not an integer") }
        guard id > 0 else { throw ProtocolError.noSuchChat }
        return RoomID(id)
    }

    public func past() throws(ProtocolError) -> MessageID {
        guard let raw = try text("past") else { return 0 }
        guard let past = Int64(raw), past >= 0 else { throw .bad("past", "is not a message id (0 or more)") }
        return MessageID(past)
    }

    /// Default 50; above 200 is cut to 200; 0 or less is refused (contract 7).
    public func limit() throws(ProtocolError) -> Int {
        guard let raw = try text("limit") else { return Limits.defaultMessageLimit }
        guard let limit = Int(raw) else { throw .bad("limit", "is not an integer") }
        guard limit > 0 else { throw .bad("limit", "must be at least 1") }
        return min(limit, Limits.maxMessageLimit)
    }

    /// `wait`: seconds a `messages` poll may wait for news, 0 (the default) to 25.
    public func wait() throws(ProtocolError) -> Int {
        guard let raw = try text("wait") else { return 0 }
        guard let seconds = Int(raw), Limits.maxWaitSeconds.contains(seconds) else {
            throw .bad("wait", "must be a whole number of seconds from 0 to \(Limits.maxWaitSeconds.upperBound)")
        }
        return seconds
    }

    public func zoom(_ name: String) throws(ProtocolError) -> ZoomLevel {
        let raw = try required(name)
        guard let value = Int(raw), let zoom = ZoomLevel(value) else {
            throw .bad(name, "must be an integer zoom level from 0 to 17")
        }
        return zoom
    }

    public func point(x xNames: [String], y yNames: [String]) throws(ProtocolError) -> MercatorPoint {
        let x = try coordinate(xNames)
        let y = try coordinate(yNames)
        return MercatorPoint(x: x, y: y)!
    }

    /// A finite decimal number in [0, 1]. Only decimal spellings are read
    /// (no `nan`, `inf` or hexadecimal floats).
    public func coordinate(_ names: [String]) throws(ProtocolError) -> Double {
        let raw = try required(names)
        guard MercatorPoint.isDecimalSpelling(raw), let value = Double(raw), MercatorPoint.isValidCoordinate(value)
        else {
            throw .bad(names[0], "must be a decimal number from 0 to 1")
        }
        return value
    }

    /// A checked text (a message, a topic) under the first of `names` present;
    /// `length` narrows the rule's (the lobby's shorter posts).
    public func checked<Rule>(
        _ type: CheckedText<Rule>.Type, _ names: [String], length: ClosedRange<Int> = Rule.length
    ) throws(ProtocolError) -> CheckedText<Rule> {
        try CheckedText(checking: try required(names), field: names[0], length: length)
    }

    /// Text trimmed and checked against its length rule; present but blank is `empty`.
    public func chatText(_ names: [String], length: ClosedRange<Int>) throws(ProtocolError) -> String {
        try ChatText.validate(try required(names), length: length).get(field: names[0])
    }
}
