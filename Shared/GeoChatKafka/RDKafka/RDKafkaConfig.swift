import CRdKafka

/// Builds an `rd_kafka_conf_t` from string properties; every failure names the property.
enum RDKafkaConfig {
    static func make(_ properties: [String: String]) throws(KafkaError) -> OpaquePointer {
        guard let conf = rd_kafka_conf_new() else { throw KafkaError.client("rd_kafka_conf_new failed") }
        var errstr = [CChar](repeating: 0, count: 512)
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            let result = rd_kafka_conf_set(conf, key, value, &errstr, errstr.count)
            if result != RD_KAFKA_CONF_OK {
                rd_kafka_conf_destroy(conf)
                // Secrets are named, never shown.
                let shown = key.contains("password") || key.contains("secret") || key.hasSuffix(".pem") ? "…" : value
                throw KafkaError.configuration("\(key)=\(shown): \(String(errorBuffer: errstr))")
            }
        }
        return conf
    }

    /// Builds and frees a configuration: librdkafka checks names and values as they are set.
    static func check(_ properties: [String: String]) throws(KafkaError) {
        rd_kafka_conf_destroy(try make(properties))
    }

    /// Creates a client handle; librdkafka takes ownership of `conf` on success.
    static func client(type: rd_kafka_type_t, conf: OpaquePointer) throws(KafkaError) -> OpaquePointer {
        var errstr = [CChar](repeating: 0, count: 512)
        guard let handle = rd_kafka_new(type, conf, &errstr, errstr.count) else {
            rd_kafka_conf_destroy(conf)
            throw KafkaError.client(String(errorBuffer: errstr))
        }
        return handle
    }
}

extension rd_kafka_resp_err_t {
    var message: String { String(cString: rd_kafka_err2str(self)) }
    var isFatal: Bool { self == RD_KAFKA_RESP_ERR__FATAL }
}

extension String {
    /// The text in a NUL-terminated error buffer librdkafka filled in.
    init(errorBuffer: [CChar]) {
        self = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
