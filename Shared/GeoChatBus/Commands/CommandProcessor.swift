import GeoChatDomain
import GeoChatKafka
import Logging
import Tracing

/// The owning side of request/reply: reads a command topic as a member of the
/// service's consumer group, runs each command through its handler, answers on
/// its `replyTo` topic, and only then counts the record processed.
public struct CommandProcessor: Sendable {
    let consumer: KafkaConsumer
    let producer: any RecordSender
    let handlers: CommandHandlers
    let logger: Logger

    public init(consumer: KafkaConsumer, producer: any RecordSender, handlers: CommandHandlers, logger: Logger) {
        self.consumer = consumer
        self.producer = producer
        self.handlers = handlers
        self.logger = logger
    }

    /// Commands of one key (room, session) run in order; different keys run side
    /// by side (see `KeyLanes`). Offsets are committed once every earlier command
    /// of their partition is done too.
    public func run() async {
        var records = consumer.records.makeAsyncIterator()
        await KeyLanes(maxInFlight: 256).run(
            next: { await records.next() }, { record in await process(record) },
            committable: { [consumer] record in consumer.markProcessed(record) })
    }

    /// Within a `process` span, child of the one whose context the record
    /// carries: the handler's own spans (its PostgreSQL statements) and the
    /// commands and events it sends join the requester's trace.
    private func process(_ record: KafkaRecord) async {
        let span = BusSpans.process(record)
        defer { span.end() }
        await InstrumentationContext.$current.withValue(span.context) { await process(record, within: span) }
    }

    private func process(_ record: KafkaRecord, within span: any Span) async {
        let started = ContinuousClock.now
        let (header, outcome) = await handlers.handle(record.value, logger: logger)
        if let header { BusSpans.describe(span, header: header) }
        // The reply carries the processing's context back (a reply's reader may follow it).
        let replyHeaders = TraceHeaders.carrying(span.context)
        switch outcome {
        case .dropped(let reason, let detail):
            BusSpans.failed(span, reason.rawValue)
            BusMetrics.commandsDropped[reason.rawValue].increment()
            logger.log(
                level: reason == .deadline ? .info : .error, "dropping command",
                metadata: [
                    "reason": "\(reason.rawValue)", "topic": "\(record.topic)", "offset": "\(record.offset)",
                    "correlation": "\(header?.correlationID ?? "")", "detail": "\(detail)",
                ])
        case .answered(let reply, let failed, let carrier):
            guard let header else { return }
            BusMetrics.commandDuration[header.commandName].record(since: started)
            BusMetrics.commandsHandled[header.commandName].increment()
            if failed {
                BusMetrics.commandErrors[header.commandName].increment()
                BusSpans.failed(span, "answered with an error")
            }
            guard !header.replyTo.isEmpty else { return }  // posted one way (`CommandBus.post`)
            guard Topics.isReplyTopic(header.replyTo) else {
                BusMetrics.commandsDropped["reply_topic"].increment()
                logger.error(
                    "reply refused: replyTo is not a reply topic",
                    metadata: ["replyTo": "\(header.replyTo.prefix(200))", "command": "\(header.commandName)"])
                return
            }
            let sendReply: @Sendable () async -> Void = { [producer, logger] in
                do {
                    try await producer.send(
                        topic: header.replyTo, key: nil, value: reply.bytes, partition: 0, headers: replyHeaders)
                } catch {
                    // The requester times out and answers "outcome unknown"; the work is
                    // done and idempotent, so a client retry gets the same answer.
                    logger.warning(
                        "reply not delivered", metadata: ["replyTo": "\(header.replyTo)", "error": "\(error)"])
                }
            }
            if !failed, let carried = carrier.delivery {
                // Another record carries the answer (a say's message event): the
                // reply record goes only if the broker did not take that one, and
                // the key's next command need not wait to find out.
                Task {
                    do { try await carried.wait() } catch { await sendReply() }
                }
                return
            }
            await sendReply()
        }
    }
}
