/// Label values derived from values, always from a bounded set.
public enum MetricLabels {
    /// The case name of an enum value (`say`, `region`, `lobby`, …), without its payload.
    public static func caseName<Value>(of value: Value) -> String {
        if let name = Mirror(reflecting: value).children.first?.label { return name }
        // A case without payload has no children; its description is its name.
        let text = String(describing: value)
        return String(text.prefix { $0.isLetter || $0.isNumber || $0 == "_" }.prefix(40))
    }
}
