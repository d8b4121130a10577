import Codecs
import HTTPServer

/// `GET /health`: liveness, no auth.
enum HealthRoutes {
    static func register(in router: inout Router, _ context: RouteContext) {
        router.add(.get, "/health") { _, _ in
            .json(data: JSONValue.object(["status": .string("ok")]).data)
        }
    }
}
