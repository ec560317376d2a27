import GeoChatMetrics
import GeoChatRuntime
import Metrics

/// The read models' sizes, read at every scrape: sessions known, rooms held
/// in memory (loaded, loading, or remembered as absent or removed).
enum ReadModelMetrics {
    static func register(sessions: SessionDirectory, messages: MessageReadModel) {
        let sessionGauge = Gauge(label: MetricNames.gatewaySessions)
        let roomGauge = Gauge(label: MetricNames.gatewayRoomsLoaded)
        ServiceMetrics.onScrape {
            sessionGauge.record(sessions.count)
            roomGauge.record(messages.roomCount)
        }
    }
}
