/// Durations as operators write them: `30d`, `12h`, `90m`, `45s`, or plain seconds.
public enum DurationText {
    public static func seconds(_ text: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        var digits = Substring(text)
        var unit = 1
        if let last = text.last, let factor = units[last] {
            unit = factor
            digits = text.dropLast()
        }
        guard !digits.isEmpty, digits.count <= 12, digits.allSatisfy(\.isASCII), let value = Int(digits), value >= 0
        else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: unit)
        return overflow ? nil : product
    }

    /// The largest whole unit: 2592000 → `30d`, 5400 → `90m`.
    public static func format(_ seconds: Int) -> String {
        for (unit, factor) in [("d", 86_400), ("h", 3600), ("m", 60)] where seconds >= factor && seconds % factor == 0 {
            return "\(seconds / factor)\(unit)"
        }
        return "\(seconds)s"
    }
}
