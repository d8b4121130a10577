import Foundation
import SyncKit

let getCommand = Command(name: "get", summary: "print an object as JSON", help: "usage: sync get <Entity> <id>") { _, _ in
    throw RuntimeError(editUnavailable)
}
let listCommand = Command(name: "list", summary: "print all objects of an entity, one JSON per line", help: "usage: sync list <Entity>") { _, _ in
    throw RuntimeError(editUnavailable)
}
