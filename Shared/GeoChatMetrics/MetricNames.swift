/// Every metric family GeoChat exposes, by name: one place to read them all
/// (docs/operations.md, "Metrics", explains each). Durations are histograms in
/// seconds; counters end in `_total`.
public enum MetricNames {
    // Gateway: legacy HTTP requests, labelled by command (`messages`, `say`, …, `invalid`).
    public static let httpRequests = "geochat_http_requests_total"
    public static let httpRequestErrors = "geochat_http_request_errors_total"
    public static let httpRequestDuration = "geochat_http_request_duration_seconds"
    // Gateway read models.
    public static let gatewaySessions = "geochat_gateway_sessions"
    public static let gatewayRoomsLoaded = "geochat_gateway_rooms_loaded"
    /// Rooms in the gateway's region index (every live room once loaded).
    public static let gatewayRoomsIndexed = "geochat_gateway_rooms_indexed"
    public static let gatewayRoomIndexLoads = "geochat_gateway_room_index_loads_total"
    /// Push streams open on the gateway, and streams closed because their subscriber stalled.
    public static let pushSubscribers = "geochat_push_subscribers"
    public static let pushStalled = "geochat_push_stalled_total"
    /// Long polls and push streams waiting for news of a room.
    public static let pushWaiting = "geochat_push_waiting"
    /// Sessions in the gateway's presence table (seen within its memory).
    public static let gatewayPresenceSessions = "geochat_gateway_presence_sessions"
    /// Sightings a gateway published, and batches it failed to publish (retried).
    public static let presenceSightingsPublished = "geochat_presence_sightings_published_total"
    public static let presencePublishFailures = "geochat_presence_publish_failures_total"
    /// Gateway: `MarkPresent`s of sessions back after a silence or new to it, by outcome (`sent`, `failed`).
    public static let presenceMarks = "geochat_presence_marks_total"

    // Kafka transport, labelled by topic (reply topics collapse to `geochat.replies`).
    public static let kafkaProduced = "geochat_kafka_produced_total"
    public static let kafkaProducedBytes = "geochat_kafka_produced_bytes_total"
    public static let kafkaProduceErrors = "geochat_kafka_produce_errors_total"
    public static let kafkaConsumed = "geochat_kafka_consumed_total"
    public static let kafkaConsumedBytes = "geochat_kafka_consumed_bytes_total"
    public static let kafkaConsumerLag = "geochat_kafka_consumer_lag"
    public static let kafkaGenerationsDeleted = "geochat_kafka_topic_generations_deleted_total"
    public static let kafkaGenerationGroupsDeleted = "geochat_kafka_generation_groups_deleted_total"
    // Request/reply: requester side (by command topic) and owner side (by command).
    public static let requestDuration = "geochat_request_duration_seconds"
    public static let requestTimeouts = "geochat_request_timeouts_total"
    public static let commandsHandled = "geochat_commands_total"
    public static let commandErrors = "geochat_command_errors_total"
    public static let commandDuration = "geochat_command_duration_seconds"
    public static let commandsDropped = "geochat_commands_dropped_total"
    /// Owner side, by command: from the requester's send to the handler's start
    /// (produce, broker, fetch, waiting behind the key's earlier commands).
    /// Requester side: from the owner's answer to its arrival. Both subtract
    /// wall clocks of two processes: across machines, their skew is in it.
    public static let commandWait = "geochat_command_wait_seconds"
    public static let replyTravel = "geochat_reply_travel_seconds"

    // PostgreSQL pool, per service.
    public static let pgQueryDuration = "geochat_pg_query_duration_seconds"
    public static let pgQueryErrors = "geochat_pg_query_errors_total"
    public static let pgConnectionsInUse = "geochat_pg_connections_in_use"
    public static let pgPoolSize = "geochat_pg_pool_max_connections"

    // Expiry jobs.
    public static let expiryJobsStarted = "geochat_expiry_jobs_started_total"
    public static let expiryJobsFinished = "geochat_expiry_jobs_finished_total"
    public static let expiryJobRunning = "geochat_expiry_job_running"
    public static let expiryRoomsExamined = "geochat_expiry_job_rooms_examined"
    public static let expiryRoomsRemoved = "geochat_expiry_job_rooms_removed"
    public static let expiryRoomsFailed = "geochat_expiry_job_rooms_failed"

    // Administration. Logins refused without a password check (label `by`:
    // `name`, too many failures of that name, session service; `gateway`, the
    // gateway-wide failure limit; `busy`, the session instance's password
    // checks all taken): counted here, audited once a minute at most.
    public static let adminLoginsThrottled = "geochat_admin_logins_throttled_total"
    /// Bearer tokens a gateway refused (label `why`: `malformed`, `refused`, `throttled`).
    public static let adminTokenRefusals = "geochat_admin_token_refusals_total"

    // The process.
    public static let residentMemory = "geochat_process_resident_memory_bytes"

    // The outboxes of messaging (message events), session and rooms (state
    // changes): label `by`: `handler`, published right after the commit, or
    // `relay`, by the outbox relay.
    public static let outboxPublished = "geochat_outbox_published_total"
    /// Events the broker did not take (label `by`); the relay tries again.
    public static let outboxPublishFailures = "geochat_outbox_publish_failures_total"
    /// Outbox rows at the end of the latest relay pass of this instance.
    public static let outboxBacklog = "geochat_outbox_backlog"
    /// Says answered with an earlier message (label `by`: `repeat`, the same
    /// session, room, nick and text within 15 s: a phone's repeat, or a command
    /// redelivered within that time; `key`, a redelivered command found by its
    /// idempotency key after that).
    public static let sayRepeats = "geochat_say_repeats_total"

    // Gateway message read model: how it heals (label `cause` on gaps: `event`,
    // a later event revealed it; `head`, a head check; `overflow`, messages
    // beyond the pending bound were left to the backfill).
    public static let timelineGaps = "geochat_gateway_timeline_gaps_total"
    public static let timelineBackfillFetches = "geochat_gateway_timeline_backfill_fetches_total"
    public static let timelineBackfillFailures = "geochat_gateway_timeline_backfill_failures_total"
    public static let timelineHeadChecks = "geochat_gateway_timeline_head_checks_total"
}
