import Foundation
import Testing

@testable import GeoChatKafka
@testable import GeoChatRuntime

/// Kafka as operators configure it: any librdkafka property, from the
/// environment (`GEOCHAT_RDKAFKA_*`) or a properties file, reaches the client,
/// and a property librdkafka refuses is named before anything starts.
@Suite struct KafkaConfigurationTests {
    func settings(_ environment: [String: String]) throws -> KafkaSettings {
        try ServiceEnvironment.kafkaSettings(Configuration(arguments: [], environment: environment), clientID: "test")
    }

    @Test func environmentPropertiesReachTheProducerAndTheConsumers() throws {
        let settings = try settings([
            "GEOCHAT_RDKAFKA_SECURITY_PROTOCOL": "SASL_SSL", "GEOCHAT_RDKAFKA_SASL_MECHANISMS": "SCRAM-SHA-512",
            "GEOCHAT_RDKAFKA_SASL_USERNAME": "geochat",
        ])
        #expect(settings.overrides["security.protocol"] == "SASL_SSL")
        #expect(settings.overrides["sasl.mechanisms"] == "SCRAM-SHA-512")
        #expect(settings.producerProperties["security.protocol"] == "SASL_SSL")
        #expect(
            settings.consumerProperties(group: "g", commits: true, reset: "earliest", fetchWaitMaxMs: 10)[
                "sasl.username"] == "geochat")
    }

    @Test func aPropertiesFileIsReadAndTheEnvironmentWins() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kafka-\(UInt64.random(in: 0...UInt64.max)).properties"
        ).path
        try """
        # an operator's file
        security.protocol = SSL
        ssl.ca.location=/etc/geochat/ca.crt
        ! another comment
        client.rack: rack-a
        """.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let settings = try settings(["GEOCHAT_KAFKA_PROPERTIES_FILE": path, "GEOCHAT_RDKAFKA_CLIENT_RACK": "rack-b"])
        #expect(
            settings.overrides == [
                "security.protocol": "SSL", "ssl.ca.location": "/etc/geochat/ca.crt", "client.rack": "rack-b",
            ])

        try "security.protocol SSL\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: ConfigurationError(key: "\(path):1", value: "security.protocol SSL", expected: "key=value")) {
            try self.settings(["GEOCHAT_KAFKA_PROPERTIES_FILE": path])
        }
    }

    @Test func aValueLibrdkafkaRefusesIsNamedBeforeAnyClientStarts() throws {
        let settings = try settings(["GEOCHAT_RDKAFKA_SECURITY_PROTOCOL": "carrier-pigeon"])
        do {
            try settings.validate()
            Issue.record("an unknown security.protocol was accepted")
        } catch {
            #expect("\(error)".contains("security.protocol=carrier-pigeon"), "\(error)")
        }
        let secret = try self.settings([
            "GEOCHAT_RDKAFKA_SASL_PASSWORD": "hunter2", "GEOCHAT_RDKAFKA_NO_SUCH_PROPERTY": "1",
        ])
        do {
            try secret.validate()
            Issue.record("an unknown property was accepted")
        } catch {
            #expect("\(error)".contains("no.such.property"), "\(error)")
            #expect(!"\(error)".contains("hunter2"))
        }
    }

    @Test func theProfileSetsTheFetchWaitsAndTheTopicsMode() throws {
        let kafka = try settings([:])
        #expect(kafka.profile == .kafka && kafka.topicsMode == .create)
        #expect(
            kafka.fetchWaitMaxMs == 2000 && kafka.backgroundFetchWaitMaxMs == 5000,
            "long polls: Kafka answers when data arrives")
        #expect(kafka.groupLessFetchWaitMaxMs == 10_000, "consumers without a group never see partitions move")
        let tansu = try settings([
            "GEOCHAT_KAFKA_PROFILE": "tansu", "GEOCHAT_KAFKA_TOPICS": "verify",
            "GEOCHAT_KAFKA_MIN_INSYNC_REPLICAS": "2",
        ])
        #expect(tansu.profile == .tansu && tansu.topicsMode == .verify && tansu.minInsyncReplicas == 2)
        #expect(
            tansu.fetchWaitMaxMs == 30 && tansu.replyFetchWaitMaxMs == 30 && tansu.backgroundFetchWaitMaxMs == 250
                && tansu.groupLessFetchWaitMaxMs == nil)
        #expect(tansu.replyTopicRecords == 2000 && tansu.generations?.periodMs == 60_000)
        #expect(kafka.replyTopicRecords == nil && kafka.generations == nil, "a cluster trims its topics")
        #expect(throws: ConfigurationError.self) { try self.settings(["GEOCHAT_KAFKA_PROFILE": "redpanda"]) }
        #expect(throws: ConfigurationError.self) { try self.settings(["GEOCHAT_KAFKA_TOPICS": "maybe"]) }
    }
}
