// swift-tools-version:6.0
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
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        // librdkafka's C API. Only Shared/GeoChatKafka/RDKafka imports it.
        .systemLibrary(
            name: "CRdKafka", path: "Shared/CRdKafka", pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]),

        // Domain types and rules: nicknames, coordinates, limits, XML, the wire contracts.
        .target(name: "GeoChatDomain", path: "Shared/GeoChatDomain", swiftSettings: strict),

        // Kafka transport: producer, consumer, topics, request/reply.
        .target(
            name: "GeoChatKafka",
            dependencies: [
                "CRdKafka", "GeoChatDomain",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/GeoChatKafka", swiftSettings: strict),

        // PostgreSQL pool and per-service versioned migrations.
        .target(
            name: "GeoChatPostgres",
            dependencies: [
                "GeoChatRuntime",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Shared/GeoChatPostgres", swiftSettings: strict),

        // Service start-up: configuration, logging, health/ready endpoints, command loops.
        .target(
            name: "GeoChatRuntime",
            dependencies: [
                "GeoChatDomain", "GeoChatKafka",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/GeoChatRuntime", swiftSettings: strict),

        .executableTarget(
            name: "Gateway",
            dependencies: [
                "GeoChatDomain", "GeoChatKafka", "GeoChatRuntime",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Services/Gateway", swiftSettings: strict),
        .executableTarget(
            name: "SessionService",
            dependencies: ["GeoChatDomain", "GeoChatKafka", "GeoChatPostgres", "GeoChatRuntime"],
            path: "Services/Session", swiftSettings: strict),
        .executableTarget(
            name: "RoomsService",
            dependencies: ["GeoChatDomain", "GeoChatKafka", "GeoChatPostgres", "GeoChatRuntime"],
            path: "Services/Rooms", swiftSettings: strict),
        .executableTarget(
            name: "MessagingService",
            dependencies: ["GeoChatDomain", "GeoChatKafka", "GeoChatPostgres", "GeoChatRuntime"],
            path: "Services/Messaging", swiftSettings: strict),
        .executableTarget(
            name: "ExpiryService",
            dependencies: ["GeoChatDomain", "GeoChatKafka", "GeoChatPostgres", "GeoChatRuntime"],
            path: "Services/Expiry", swiftSettings: strict),

        .testTarget(name: "GeoChatDomainTests", dependencies: ["GeoChatDomain"], path: "Tests/GeoChatDomainTests"),
        .testTarget(
            name: "GeoChatKafkaTests", dependencies: ["GeoChatKafka", "GeoChatDomain"],
            path: "Tests/GeoChatKafkaTests"),
        .testTarget(
            name: "MessagingTests", dependencies: ["MessagingService", "GeoChatDomain"],
            path: "Tests/MessagingTests"),
        .testTarget(
            name: "GatewayTests", dependencies: ["Gateway", "GeoChatDomain", "GeoChatKafka"],
            path: "Tests/GatewayTests"),
    ]
)
