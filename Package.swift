// swift-tools-version:6.1
// GeoChat server: five executables (Services/) over shared libraries (Shared/).
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "geochat-server",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "geochat-gateway", targets: ["Gateway"]),
        .executable(name: "geochat-session", targets: ["SessionService"]),
        .executable(name: "geochat-rooms", targets: ["RoomsService"]),
        .executable(name: "geochat-messaging", targets: ["MessagingService"]),
        .executable(name: "geochat-expiry", targets: ["ExpiryService"]),
        .executable(name: "geochat-admin", targets: ["AdminCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Traces across the cluster (off unless GEOCHAT_TRACING=otlp): the tracing API the code speaks, and
        // its OpenTelemetry exporter, OTLP over HTTP only (the trait keeps gRPC out of the build; needs tools 6.1).
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        // Admin accounts: bcrypt password hashes (HummingbirdBcrypt), SHA-256 of bearer tokens (Crypto),
        // and the geochat-admin command line.
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // Property-based tests of the parsing layer (tests only).
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: [
        // librdkafka's C API. Only Shared/GeoChatKafka/RDKafka imports it.
        .systemLibrary(
            name: "CRdKafka", path: "Shared/CRdKafka", pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]),

        // Domain types and rules (nicknames, coordinates, limits) and the wire contracts between services.
        .target(
            name: "GeoChatDomain", dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            path: "Shared/GeoChatDomain", swiftSettings: strict),

        // The admin HTTP API's JSON bodies: the gateway's admin surface and the
        // `geochat-admin` command line speak them; no service does.
        .target(
            name: "GeoChatAdminAPI", dependencies: ["GeoChatDomain"],
            path: "Shared/GeoChatAdminAPI", swiftSettings: strict),

        // The phones' protocol: form parsing, parameter reading, checked requests, the XML answers.
        // Only the gateway links it.
        .target(
            name: "GeoChatLegacyProtocol", dependencies: ["GeoChatDomain"],
            path: "Shared/GeoChatLegacyProtocol", swiftSettings: strict),

        // Metric names and the labelled-family cache the instrumented seams share.
        .target(
            name: "GeoChatMetrics",
            dependencies: [.product(name: "Metrics", package: "swift-metrics")],
            path: "Shared/GeoChatMetrics", swiftSettings: strict),

        // Kafka transport only: producer, consumer, topics. Every C call and type stays in RDKafka/.
        .target(
            name: "GeoChatKafka",
            dependencies: [
                "CRdKafka", "GeoChatMetrics",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/GeoChatKafka", swiftSettings: strict),

        // GeoChat's messaging on Kafka: typed request/reply, command handling,
        // deadlines, event publishing, state feeds; an in-memory bus for unit tests.
        .target(
            name: "GeoChatBus",
            dependencies: [
                "GeoChatDomain", "GeoChatKafka", "GeoChatMetrics",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Shared/GeoChatBus", swiftSettings: strict),

        // PostgreSQL pool and per-service versioned migrations.
        .target(
            name: "GeoChatPostgres",
            dependencies: [
                "GeoChatRuntime", "GeoChatBus", "GeoChatDomain", "GeoChatMetrics",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Shared/GeoChatPostgres", swiftSettings: strict),

        // The service host: configuration, logging, start-up and shutdown, health/ready endpoints.
        .target(
            name: "GeoChatRuntime",
            dependencies: [
                "GeoChatDomain", "GeoChatKafka", "GeoChatBus", "GeoChatMetrics",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
            ],
            path: "Shared/GeoChatRuntime", swiftSettings: strict),

        // The gateway's core: what a chat client can do (`ChatActions`), the read
        // models, the limits and the service clients, for every surface alike. It
        // links no HTTP library, so nothing of a request's transport leaks into it.
        .target(
            name: "GatewayCore",
            dependencies: [
                "GeoChatDomain", "GeoChatBus", "GeoChatKafka", "GeoChatMetrics",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            path: "Services/GatewayCore", swiftSettings: strict),
        // The gateway: its surfaces (legacy XML, JSON API, push, web map, admin)
        // over `GatewayCore`, the shared HTTP plumbing, settings and start-up.
        .executableTarget(
            name: "Gateway",
            dependencies: [
                "GatewayCore", "GeoChatAdminAPI", "GeoChatDomain", "GeoChatLegacyProtocol", "GeoChatKafka",
                "GeoChatBus", "GeoChatMetrics", "GeoChatRuntime",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Services/Gateway",
            // The JSON API's and the admin API's OpenAPI documents, compiled in as bytes
            // (`OpenAPISpec`, `AdminOpenAPISpec`) and served as they are.
            resources: [.embedInCode("API/openapi.json"), .embedInCode("AdminAPI/admin-openapi.json")],
            swiftSettings: strict),
        .executableTarget(
            name: "SessionService",
            dependencies: [
                "GeoChatDomain", "GeoChatKafka", "GeoChatBus", "GeoChatMetrics", "GeoChatPostgres", "GeoChatRuntime",
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            path: "Services/Session", swiftSettings: strict),
        .executableTarget(
            name: "RoomsService",
            dependencies: ["GeoChatDomain", "GeoChatKafka", "GeoChatBus", "GeoChatPostgres", "GeoChatRuntime"],
            path: "Services/Rooms", swiftSettings: strict),
        .executableTarget(
            name: "MessagingService",
            dependencies: [
                "GeoChatDomain", "GeoChatKafka", "GeoChatBus", "GeoChatMetrics", "GeoChatPostgres", "GeoChatRuntime",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Services/Messaging", swiftSettings: strict),
        .executableTarget(
            name: "ExpiryService",
            dependencies: ["GeoChatDomain", "GeoChatKafka", "GeoChatBus", "GeoChatPostgres", "GeoChatRuntime"],
            path: "Services/Expiry", swiftSettings: strict),
        .executableTarget(
            name: "AdminCLI",
            dependencies: [
                "GeoChatAdminAPI", "GeoChatDomain", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Services/AdminCLI", swiftSettings: strict),

        .testTarget(
            name: "LegacyProtocolTests",
            dependencies: [
                "GeoChatLegacyProtocol", "GeoChatDomain",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            path: "Tests/LegacyProtocolTests"),
        .testTarget(
            name: "GeoChatDomainTests",
            dependencies: ["GeoChatDomain", .product(name: "PropertyBased", package: "swift-property-based")],
            path: "Tests/GeoChatDomainTests"),
        // Tests that need a running Kafka-protocol broker (GEOCHAT_TEST_KAFKA_BROKERS).
        .testTarget(
            name: "BrokerTests", dependencies: ["GeoChatKafka", "GeoChatBus", "GeoChatDomain"],
            path: "Tests/BrokerTests"),
        .testTarget(
            name: "GeoChatBusTests",
            dependencies: [
                "GeoChatBus", "GeoChatKafka", "GeoChatDomain", "GeoChatTestSupport",
                // The W3C codec of the tests' round trips: swift-otel's tracer, never bootstrapped.
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
            ],
            path: "Tests/GeoChatBusTests"),
        // A scratch database per test on the test PostgreSQL (GEOCHAT_TEST_PG_PORT).
        .target(
            name: "GeoChatTestSupport",
            dependencies: [
                "GeoChatPostgres", "GeoChatBus", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TestSupport"),
        .testTarget(
            // The services' platform: configuration, and reaching Kafka and PostgreSQL as operators set them up.
            name: "PlatformTests",
            dependencies: [
                "GeoChatPostgres", "GeoChatRuntime", "GeoChatKafka", "GeoChatTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/PlatformTests"),
        .testTarget(
            name: "SessionServiceTests",
            dependencies: [
                "SessionService", "GeoChatBus", "GeoChatDomain", "GeoChatTestSupport",
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
            ],
            path: "Tests/SessionServiceTests"),
        .testTarget(
            name: "RoomsServiceTests",
            dependencies: [
                "RoomsService", "GeoChatBus", "GeoChatDomain", "GeoChatKafka", "GeoChatPostgres", "GeoChatTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/RoomsServiceTests"),
        .testTarget(
            name: "ExpiryServiceTests",
            dependencies: ["ExpiryService", "GeoChatBus", "GeoChatDomain", "GeoChatRuntime", "GeoChatTestSupport"],
            path: "Tests/ExpiryServiceTests"),
        .testTarget(
            name: "MessagingServiceTests",
            dependencies: ["MessagingService", "GeoChatDomain", "GeoChatBus", "GeoChatTestSupport"],
            path: "Tests/MessagingServiceTests"),
        // The gateway's core alone: read models, limits, presence. Links no
        // HTTP library and no service, as the core does not.
        .testTarget(
            name: "GatewayCoreTests",
            dependencies: [
                "GatewayCore", "GeoChatDomain", "GeoChatBus", "GeoChatTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/GatewayCoreTests"),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "Gateway", "GatewayCore", "GeoChatAdminAPI", "GeoChatDomain", "GeoChatKafka", "GeoChatBus",
                "GeoChatRuntime", "GeoChatLegacyProtocol",
                // The router tests run the gateway over the services' real handlers on in-memory stores.
                "SessionService", "RoomsService", "MessagingService", "GeoChatTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            path: "Tests/GatewayTests"),
    ]
)
