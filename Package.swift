// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "status-poller",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "status-poller", targets: ["status-poller"]),
        .executable(name: "status-poller-demo", targets: ["status-poller-demo"]),
        .library(name: "StatusPolling", targets: ["StatusPolling", "AppStoreBackends", "EntitlementCore"]),
        .library(name: "SQLiteStore", targets: ["SQLiteStore"]),
        .library(name: "PostgresStore", targets: ["PostgresStore"]),
        .library(name: "AppStoreSimulator", targets: ["AppStoreSimulator"]),
        .library(name: "PollingDemo", targets: ["PollingDemo"]),
        .library(name: "ReceiverServer", targets: ["ReceiverServer"]),
        .library(name: "ReportPage", targets: ["ReportPage"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Already in the graph through async-http-client: its HTTP CONNECT handler for the egress proxy.
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        // Child processes (the demo's workers, the tests' binary): Foundation's Process on Linux
        // over-reads /proc/self/fd when a process has some 1,350 descriptors open, and crashes.
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
    ],
    targets: [
        // The pure core: the contract (ContractColumn, SubscriptionState), the decision
        // (EntitlementDecision), the chain merge and the row update plan, the neutral answers a
        // backend or a notification brings (StatusAnswer, ReceivedNotification) and the status-source
        // seam. No I/O, no clock, no Foundation; it imports no other target.
        .target(
            name: "EntitlementCore",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The App Store backends: verifyReceipt (AppStore/) and the App Store Server API (ServerAPI/):
        // clients, wire models, receipts, signature verification, notifications V1 and V2, the rate
        // limiter; the request gate both send through (Gate/) and the HTTP client (HTTP/). Answers
        // leave it as the core's neutral types.
        .target(
            name: "AppStoreBackends",
            dependencies: [
                "EntitlementCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // The jobs: PollJob and the run pipeline (lock, run history, signals, report, metrics), the
        // notification receiver and catch-up, the event outbox and its deliverer, refund requests,
        // customer support, the report; every workflow over the store seam (SQLStore).
        .target(
            name: "StatusPolling",
            dependencies: [
                "EntitlementCore",
                "AppStoreBackends",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                // Webhook signatures (HMAC).
                .product(name: "Crypto", package: "swift-crypto"),
                // NotificationReceiver.Configuration's trusted roots.
                .product(name: "X509", package: "swift-certificates"),
                // The event feed's deliverer (webhooks to the web service's endpoints).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // The prune archive's gzip files.
                "CZlib",
            ]
        ),
        // The system zlib (already linked for HTTP decompression), for the prune archive.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        // The SQLite store (GRDB). The only target that imports GRDB.
        .target(
            name: "SQLiteStore",
            dependencies: [
                "StatusPolling",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API on GRDB's compiled statements (Database+SQLStatement.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The PostgreSQL store (PostgresNIO): one population shared by several workers, each
        // leasing batches of due rows. The only target that imports PostgresNIO.
        .target(
            name: "PostgresStore",
            dependencies: [
                "AppStoreBackends",
                "StatusPolling",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // A verifyReceipt-compatible App Store over simulated time. Shares no type with the poller,
        // so a decoding mistake in the client cannot be mirrored by the simulator.
        .target(
            name: "AppStoreSimulator",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // The App Store Server Notifications receiver over HTTP (Hummingbird): the library's
        // `NotificationReceiver` behind Apple's POST, `/healthz` and `/metrics`.
        .target(
            name: "ReceiverServer",
            dependencies: [
                "EntitlementCore",
                "StatusPolling",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The demo: the poller, night after night, against the simulator, checked against its truth.
        .target(
            name: "ReportPage",
            dependencies: [
                "StatusPolling",
                .product(name: "Mustache", package: "swift-mustache"),
            ]
        ),
        .target(
            name: "PollingDemo",
            dependencies: [
                "EntitlementCore",
                "AppStoreBackends",
                "StatusPolling",
                "AppStoreSimulator",
                "ReceiverServer",
                .product(name: "Logging", package: "swift-log"),
                // `demo --events`: the web service's endpoint on loopback, and the deliverer's client.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // Its workers, and the tests' children, as child processes (ChildProcess).
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Which build this is (version, git commit, build date) for `--version` and the run report,
        // generated before every build by the plugin below; only the executable depends on it.
        .target(name: "BuildInfo", plugins: ["BuildInfoPlugin"]),
        .plugin(name: "BuildInfoPlugin", capability: .buildTool()),
        // What both executables share: the exit-code handling of `main()`, the errors, logging, the
        // database a `--database` names, the small parsers. `package` access, no product.
        .target(
            name: "PollerCommandLine",
            dependencies: [
                "StatusPolling",
                // RFC3339Timestamp, for the dates of --now and --since.
                "EntitlementCore",
                "SQLiteStore",
                "PostgresStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // One malloc arena, held from load (Sources/CMalloc/CMalloc.c).
                "CMalloc",
            ]
        ),
        // One malloc arena, set by a C constructor when an executable loads (before any thread
        // allocates, which a `mallopt` in Swift's `main` comes after).
        .target(name: "CMalloc"),
        // The thin command line: parse, configure, call the library, map the outcome to an exit code.
        // It links neither the simulator nor the demo: the package check asserts it.
        .executableTarget(
            name: "status-poller",
            dependencies: [
                "EntitlementCore",
                "AppStoreBackends",
                "BuildInfo",
                "PollerCommandLine",
                "StatusPolling",
                "SQLiteStore",
                "PostgresStore",
                "ReceiverServer",
                "ReportPage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // The event deliverer's client, made once per process.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The simulator and the demo as a program of their own (`Scripts/demo.sh`, the harnesses):
        // its workers run the `status-poller` beside it.
        .executableTarget(
            name: "status-poller-demo",
            dependencies: [
                "BuildInfo",
                "PollerCommandLine",
                "StatusPolling",
                "SQLiteStore",
                "PostgresStore",
                "AppStoreSimulator",
                "PollingDemo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "StatusPollingTests",
            dependencies: [
                "EntitlementCore",
                "AppStoreBackends",
                "StatusPolling",
                "SQLiteStore",
                "PostgresStore",
                "AppStoreSimulator",
                "PollingDemo",
                "ReceiverServer",
                "ReportPage",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // The loopback CONNECT proxy of the egress tests.
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                // Reads back the prune archive's gzip files.
                "CZlib",
                // Built before the tests so that CommandLineTests can run the real binaries.
                "status-poller",
                "status-poller-demo",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // The web service's own connection in the PostgreSQL store's tests.
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
