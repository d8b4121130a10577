import Codecs
import Foundation
import SyncEngine

/// `PUT /v1/datasets/{dataset}/schema` registers (or additively migrates) a dataset's schema;
/// `GET` returns it.
enum SchemaRoutes {
    static let pattern = "/v1/datasets/{dataset}/schema"

    static func register(in router: inout Router, _ context: RouteContext) {
        router.add(.put, pattern, admission: context.datasetAdmission(for: .readWrite)) { request, parameters in
            let dataset = try context.authorizedDataset(request, parameters, for: .readWrite)
            let (document, _) = try dataset.registerSchema(request.body)
            return .json(data: JSONValue.object(["versionHash": .string(document.versionHash), "dataset": .string(dataset.name)]).data)
        }
        router.add(.get, pattern, admission: context.datasetAdmission) { request, parameters in
            let dataset = try context.authorizedDataset(request, parameters)
            guard let document = try dataset.schema() else { throw DatasetError.schemaNotRegistered(dataset: dataset.name) }
            return .json(data: try document.jsonData())
        }
    }
}
