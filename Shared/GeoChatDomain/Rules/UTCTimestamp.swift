/// Timestamps from milliseconds since 1970, in UTC: the phones' `added`
/// (`YYYY-MM-DD HH:MM:SS`) and RFC 3339 (`YYYY-MM-DDTHH:MM:SSZ`, the JSON API and transcripts).
/// Civil-from-days arithmetic (Howard Hinnant's algorithm): no Foundation
/// formatter on the poll path.
public enum UTCTimestamp {
    public static func format(millisecondsSince1970 ms: Int64) -> String {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        var days = seconds / 86_400
        var rem = seconds % 86_400
        if rem < 0 {
            rem += 86_400
            days -= 1
        }
        let (y, m, d) = civil(fromDays: days)
        return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + " "
            + pad(rem / 3600, 2) + ":" + pad(rem % 3600 / 60, 2) + ":" + pad(rem % 60, 2)
    }

    public static func rfc3339(millisecondsSince1970 ms: Int64) -> String {
        var text = format(millisecondsSince1970: ms)
        let space = text.index(text.startIndex, offsetBy: 10)
        text.replaceSubrange(space...space, with: "T")
        return text + "Z"
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }

    static func pad(_ v: Int64, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
