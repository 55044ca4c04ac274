// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Northwind",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Northwind", targets: ["Northwind"]),
        .executable(name: "northwind", targets: ["northwind"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Tests only: the WebDriver client's HTTP (Foundation's URLSession on Linux fails against chromedriver).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
    ],
    targets: [
        // Schema, migrations, records and the file-backed blob store: everything that knows SQL.
        .target(
            name: "NorthwindStore",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Domain operations, demo data and classic import: the API that the CLI, web and sync call.
        .target(
            name: "Northwind",
            dependencies: [
                "NorthwindStore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
            ],
            resources: [.copy("Resources/reports.sql")],
            swiftSettings: swiftSettings
        ),
        // The shop-floor web application and the JSON API, on Hummingbird, with live updates.
        .target(
            name: "NorthwindWeb",
            dependencies: [
                "Northwind",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Templates"), .copy("Static"), .copy("openapi.json")],
            swiftSettings: swiftSettings
        ),
        // The `northwind` command-line tool, including `bench`, which compares the domain layer with bare SQLite.
        .executableTarget(
            name: "northwind",
            dependencies: [
                "Northwind",
                "NorthwindWeb",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // The bare C API, for the benchmark's baseline.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NorthwindTests",
            dependencies: [
                "Northwind", "NorthwindWeb", "northwind",
                .product(name: "GRDB", package: "GRDB.swift"),
                // The bare C API, to check a store as tools without the app's SQL functions see it.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
