import Foundation
import SyncKit

let editUnavailable = "editing without Swift types needs RecordEditor, which is not on main yet"

let putCommand = Command(name: "put", summary: "create or update an object", help: "usage: sync put <Entity> [id] field=value...") { _, _ in
    throw RuntimeError(editUnavailable)
}
let linkCommand = Command(name: "link", summary: "add a relationship member", help: "usage: sync link <Entity> <id> <relationship> <targetId>") { _, _ in
    throw RuntimeError(editUnavailable)
}
let unlinkCommand = Command(name: "unlink", summary: "remove a relationship member", help: "usage: sync unlink <Entity> <id> <relationship> <targetId>") { _, _ in
    throw RuntimeError(editUnavailable)
}
let deleteCommand = Command(name: "delete", summary: "delete an object", help: "usage: sync delete <Entity> <id>") { _, _ in
    throw RuntimeError(editUnavailable)
}
