/// Where an expiry job stands: one runs at a time; it ends finished or failed.
public enum ExpiryJobStatus: String, Codable, Sendable, CaseIterable {
    case running, finished, failed
}
