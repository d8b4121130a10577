import Foundation
import LocalStore
import TestSupport

// Small hand-expanded entities for delete-rule, count and migration tests.

final class Folder {
    let _$entityState = EntityState()
    init(_$materializing _: MaterializingToken) {}
    init(name: String = "") { _name = name }
    private var _name: String = ""
    var name: String { get { _name } set { _$willChangeAttribute(self, "name"); _name = newValue } }
    private var _files: Set<File> = []
    var files: Set<File> {
        get { _$willReadRelationship(self, "files"); return _files }
        set { _$setRelationship(self, "files", to: newValue) }
    }
    private var _tags: Set<Tag> = []
    var tags: Set<Tag> {
        get { _$willReadRelationship(self, "tags"); return _tags }
        set { _$setRelationship(self, "tags", to: newValue) }
    }
    func addToTags(_ member: Tag) { _$addToRelationship(self, "tags", member) }
}

extension Folder: PersistentEntity {
    static let _$entity = EntityDescription(Folder.self, name: "Folder", properties: [
        .attribute("name", keyPath: \Folder.name, get: { $0._name }, set: { $0._name = $1 }),
        .relationship("files", keyPath: \Folder.files, get: { $0._files }, modify: { $1(&$0._files) }, inverse: "folder", deleteRule: .deny),
        .relationship("tags", keyPath: \Folder.tags, get: { $0._tags }, modify: { $1(&$0._tags) }, inverse: "folders", deleteRule: .nullify, maxCount: 2),
    ])
}

final class File {
    let _$entityState = EntityState()
    init(_$materializing _: MaterializingToken) {}
    init(name: String = "") { _name = name }
    private var _name: String = ""
    var name: String { get { _name } set { _$willChangeAttribute(self, "name"); _name = newValue } }
    private var _folder: Folder? = nil
    var folder: Folder? {
        get { _$willReadRelationship(self, "folder"); return _folder }
        set { _$setRelationship(self, "folder", to: newValue) }
    }
}

extension File: PersistentEntity {
    static let _$entity = EntityDescription(File.self, name: "File", properties: [
        .attribute("name", keyPath: \File.name, get: { $0._name }, set: { $0._name = $1 }),
        .relationship("folder", keyPath: \File.folder, get: { $0._folder }, set: { $0._folder = $1 }, inverse: "files", deleteRule: .nullify, minCount: 1),
    ])
}

final class Tag {
    let _$entityState = EntityState()
    init(_$materializing _: MaterializingToken) {}
    init(label: String = "") { _label = label }
    private var _label: String = ""
    var label: String { get { _label } set { _$willChangeAttribute(self, "label"); _label = newValue } }
    private var _folders: [Folder] = []
    var folders: [Folder] {
        get { _$willReadRelationship(self, "folders"); return _folders }
        set { _$setRelationship(self, "folders", to: newValue) }
    }
}

extension Tag: PersistentEntity {
    static let _$entity = EntityDescription(Tag.self, name: "Tag", properties: [
        .attribute("label", keyPath: \Tag.label, get: { $0._label }, set: { $0._label = $1 }),
        .relationship("folders", keyPath: \Tag.folders, get: { $0._folders }, modify: { $1(&$0._folders) }, inverse: "tags", deleteRule: .nullify),
    ])
}

/// Opens the store of folders, files and tags on a temporary file.
func openFolderStore(_ file: TemporaryStoreFile) throws -> ObjectStore {
    try ObjectStore(path: file.path, entities: [Folder.self, File.self, Tag.self])
}
