import Foundation
import GeoChatDomain
import GeoChatMetrics
import Logging

/// The owning side of request/reply: reads a command topic as a member of the
/// service's consumer group, runs each command, answers on its `replyTo` topic,
/// and only then counts the record processed.
///
/// A command whose deadline has passed is dropped unanswered: its requester has
/// already told the client "unavailable, nothing was done", so it must stay undone.
public struct CommandProcessor<Command: Codable & Sendable>: Sendable {
    public typealias Handler = @Sendable (RequestEnvelope<Command>) async -> Result<ReplyBody, ProtocolError>

    let consumer: KafkaConsumer
    let producer: any RecordSender
    let logger: Logger
    let handler: Handler

    public init(consumer: KafkaConsumer, producer: any RecordSender, logger: Logger, handler: @escaping Handler) {
        self.consumer = consumer
        self.producer = producer
        self.logger = logger
        self.handler = handler
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

    private func process(_ record: KafkaRecord) async {
        let envelope: RequestEnvelope<Command>
        do {
            envelope = try JSONDecoder().decode(RequestEnvelope<Command>.self, from: Data(record.value))
        } catch {
            KafkaMetrics.commandsDropped["undecodable"].increment()
            logger.error(
                "dropping undecodable command",
                metadata: ["topic": "\(record.topic)", "offset": "\(record.offset)", "error": "\(error)"])
            return
        }
        guard envelope.schema == RequestEnvelope<Command>.schemaName else {
            KafkaMetrics.commandsDropped["schema"].increment()
            logger.error("dropping command of unknown schema", metadata: ["schema": "\(envelope.schema)"])
            return
        }
        if RequestClient.nowMs() > envelope.deadlineMs {
            KafkaMetrics.commandsDropped["deadline"].increment()
            logger.info(
                "dropping command past its deadline",
                metadata: ["correlation": "\(envelope.correlationID)", "topic": "\(record.topic)"])
            return
        }
        let command = KafkaMetrics.commandLabel(envelope.command)
        let started = ContinuousClock.now
        let result = await handler(envelope)
        KafkaMetrics.commandDuration[command].record(since: started)
        KafkaMetrics.commandsHandled[command].increment()
        if case .failure = result { KafkaMetrics.commandErrors[command].increment() }
        let reply = ReplyEnvelope(correlationID: envelope.correlationID, result: result)
        do {
            try await producer.send(
                topic: envelope.replyTo, key: nil, value: Array(try JSONEncoder().encode(reply)), partition: 0)
        } catch {
            // The requester times out and answers "unavailable"; the work is done
            // and idempotent, so a client retry gets the same answer.
            logger.warning("reply not delivered", metadata: ["replyTo": "\(envelope.replyTo)", "error": "\(error)"])
        }
    }
}
