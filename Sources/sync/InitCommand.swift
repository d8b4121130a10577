import Foundation
import SyncKit

let initCommand = Command(
    name: "init", summary: "create a store from a schema and configure its server",
    help: """
        usage: sync init [<store>] --schema <json-file> --server <url> --dataset <name> --token <token>

        Creates the store file (default: --store, $SYNC_STORE, else ./sync.sqlite) from a schema
        JSON as 'ObjectStore.exportSchema()' or 'GET /v1/datasets/{dataset}/schema' writes it,
        gives it a replica ID, and saves the server URL, dataset and token in it. Does not
        contact the server: 'sync push' registers the schema.

        options:
          --schema FILE   the schema JSON (SchemaDocument)
          --server URL    the syncd base URL, e.g. http://127.0.0.1:8080
          --dataset NAME  the dataset (1-64 of A-Z a-z 0-9 . _ -, not starting with '.')
          --token TOKEN   the dataset's bearer token ('syncd token add')
        """,
    options: ["schema", "server", "dataset", "token"]
) { arguments, storePath in
    let path = try arguments.positionals([], optional: 1).first ?? storePath
    _ = try arguments.required("schema")
    _ = path
    throw RuntimeError("creating a store from a schema needs ObjectStore(path:schema:policy:), which is not on main yet")
}
