import GatewayCore
import GeoChatMetrics
import GeoChatRuntime
import Metrics

/// The read models' sizes, read at every scrape: sessions known, rooms held
/// in memory (loaded, loading, or remembered as absent or removed), rooms in
/// the region index, sessions in the presence table.
enum ReadModelMetrics {
    static func register(gateway: Gateway) {
        let sessionGauge = Gauge(label: MetricNames.gatewaySessions)
        let roomGauge = Gauge(label: MetricNames.gatewayRoomsLoaded)
        let indexGauge = Gauge(label: MetricNames.gatewayRoomsIndexed)
        let presenceGauge = Gauge(label: MetricNames.gatewayPresenceSessions)
        let pushGauge = Gauge(label: MetricNames.pushSubscribers)
        let waitingGauge = Gauge(label: MetricNames.pushWaiting)
        ServiceMetrics.onScrape {
            pushGauge.record(gateway.events.subscribers)
            waitingGauge.record(gateway.messages.signals.waiting)
            sessionGauge.record(gateway.sessions.count)
            roomGauge.record(gateway.messages.roomCount)
            indexGauge.record(gateway.rooms.count)
            presenceGauge.record(gateway.presence.count)
        }
    }
}
