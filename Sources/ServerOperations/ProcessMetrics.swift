import CoreMetrics
import Prometheus
import Synchronization

/// The process's metrics: one Prometheus registry behind swift-metrics, so that Hummingbird's `MetricsMiddleware`
/// and the domain's counters (plain `Counter(label:)`) land in what `/metrics` shows.
public enum ProcessMetrics {
    /// Where every metric of this process is kept.
    public static let registry = PrometheusCollectorRegistry()

    private static let bootstrapped = Mutex(false)

    /// Makes `registry` the backend of swift-metrics, once per process (swift-metrics allows one bootstrap); later
    /// calls do nothing. Call it before the first metric is made: a metric made earlier stays a no-op.
    public static func bootstrap() {
        bootstrapped.withLock { done in
            guard !done else { return }
            var factory = PrometheusMetricsFactory(registry: registry)
            // From a cached page (a millisecond) to a heavy report (seconds).
            factory.defaultDurationHistogramBuckets = [
                .milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(500),
                .seconds(2), .seconds(10),
            ]
            MetricsSystem.bootstrap(factory)
            done = true
        }
    }

    /// Sets a gauge of `registry` (made on first use), for figures read when `/metrics` is asked.
    public static func set(_ name: String, _ value: Double, help: String) {
        registry.makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help)).set(value)
    }
}
