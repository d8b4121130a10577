import Foundation
import HTTPServer

/// `GET /v1/datasets/{dataset}/snapshot`: a consistent copy of the store file, with the log
/// cursor it includes in `Sync-Cursor` and the digest of the log up to it in `Sync-Cursor-Digest`
/// (the client's first pull sends it as `afterDigest`).
enum SnapshotRoutes {
    static func register(in router: inout Router, _ context: RouteContext) {
        router.add(.get, "/v1/datasets/{dataset}/snapshot", admission: context.datasetAdmission) { request, parameters in
            let dataset = try context.authorizedDataset(request, parameters)
            let snapshot = try dataset.snapshot()
            return HTTPResponse(status: .ok, headers: [
                "Content-Type": "application/vnd.sqlite3", "Sync-Cursor": String(snapshot.position.cursor),
                "Sync-Cursor-Digest": snapshot.position.digest.description,
                "Content-Disposition": "attachment; filename=\"\(dataset.name).sqlite\"",
            ], body: snapshot.data)
        }
    }
}
