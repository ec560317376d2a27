// swift-tools-version:6.0
// The benchmarks' reference server: a bare Hummingbird hello world (main.swift), a
// package of its own so that only the benchmarks that run it build it, in release mode
// (deploy/bench.sh and deploy/bench-push.sh, through deploy/lib.sh's hello_build):
//   swift build -c release --package-path Tests/Benchmarks/HelloWorld
// Hummingbird at the version the root Package.swift asks for, so that the reference
// runs the HTTP stack the gateway runs.
import PackageDescription

let package = Package(
    name: "HelloWorld",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1")
    ],
    targets: [
        .executableTarget(
            name: "HelloWorld",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")],
            path: ".", swiftSettings: [.swiftLanguageMode(.v6)])
    ]
)
