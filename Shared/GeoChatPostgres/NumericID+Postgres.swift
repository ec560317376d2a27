import GeoChatDomain
import NIOCore
import PostgresNIO

// Room and message ids bind and read as PostgreSQL `bigint`, alone and in arrays
// (`= ANY(...)`), exactly as the `Int64` they wrap. (Constrained to `NumericID`,
// these win over PostgresNIO's defaults for `Encodable` (JSON) and `RawRepresentable`.)
extension PostgresEncodable where Self: NumericID {
    public static var psqlType: PostgresDataType { .int8 }
    public static var psqlFormat: PostgresFormat { .binary }

    public func encode<JSONEncoder: PostgresJSONEncoder>(
        into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        rawValue.encode(into: &byteBuffer, context: context)
    }
}

extension PostgresArrayEncodable where Self: NumericID {
    public static var psqlArrayType: PostgresDataType { .int8Array }
}

extension PostgresDecodable where Self: NumericID {
    public init<JSONDecoder: PostgresJSONDecoder>(
        from buffer: inout ByteBuffer, type: PostgresDataType, format: PostgresFormat,
        context: PostgresDecodingContext<JSONDecoder>
    ) throws {
        self.init(rawValue: try Int64(from: &buffer, type: type, format: format, context: context))
    }
}

extension RoomID: PostgresArrayEncodable, PostgresArrayDecodable {}
extension MessageID: PostgresArrayEncodable, PostgresArrayDecodable {}
