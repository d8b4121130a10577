import Foundation
import HTTPServer

/// `GET /metrics`: Prometheus text format 0.0.4, no auth.
enum MetricsRoutes {
    static func register(in router: inout Router, _ context: RouteContext) {
        router.add(.get, "/metrics") { _, _ in
            HTTPResponse(status: .ok, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
                         body: Data(context.metrics.exposition().utf8))
        }
    }
}
