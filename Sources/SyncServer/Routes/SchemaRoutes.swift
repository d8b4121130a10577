import Codecs
import Foundation
import SyncEngine

/// `PUT /v1/datasets/{dataset}/schema` registers (or additively migrates) a dataset's schema, or
/// accepts an older app's;
/// `GET` returns it; `GET .../schema/versions` returns every version it was registered with.
enum SchemaRoutes {
    static let pattern = "/v1/datasets/{dataset}/schema"
    static let versionsPattern = "/v1/datasets/{dataset}/schema/versions"

    static func register(in router: inout Router, _ context: RouteContext) {
        router.add(.put, pattern, admission: context.datasetAdmission(for: .readWrite)) { request, parameters in
            let dataset = try context.authorizedDataset(request, parameters, for: .readWrite)
            let (document, registration) = try dataset.registerSchema(request.body)
            return .json(data: JSONValue.object([
                "versionHash": .string(document.versionHash), "dataset": .string(dataset.name),
                "registration": .string(registration.rawValue),
            ]).data)
        }
        router.add(.get, pattern, admission: context.datasetAdmission) { request, parameters in
            let dataset = try context.authorizedDataset(request, parameters)
            guard let document = try dataset.schema() else { throw DatasetError.schemaNotRegistered(dataset: dataset.name) }
            return .json(data: try document.jsonData())
        }
        router.add(.get, versionsPattern, admission: context.datasetAdmission) { request, parameters in
            let dataset = try context.authorizedDataset(request, parameters)
            let versions = try dataset.schemaVersions()
            guard let current = versions.last else { throw DatasetError.schemaNotRegistered(dataset: dataset.name) }
            let entries: [JSONValue] = try versions.map { version in
                .object([
                    "versionHash": .string(version.schema.versionHash),
                    "registeredAt": version.registeredAt.map { .string($0.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))) } ?? .null,
                    "schema": .encoded(try version.schema.jsonData()),
                ])
            }
            return .json(data: JSONValue.object([
                "dataset": .string(dataset.name), "current": .string(current.schema.versionHash), "versions": .array(entries),
            ]).data)
        }
    }
}
