import Foundation
import LocalStore

// Three versions of one entity, "Gadget", as an app's model evolves.

/// Version 1: name, count, color.
final class GadgetV1 {
    let _$entityState = EntityState()
    init(_$materializing _: MaterializingToken) {}
    init() {}
    var name: String = ""
    var count: Int = 0
    var color: String = "red"
}

extension GadgetV1: PersistentEntity {
    static let _$entity = EntityDescription(GadgetV1.self, name: "Gadget", properties: [
        .attribute("name", keyPath: \GadgetV1.name, get: { $0.name }, set: { $0.name = $1 }),
        .attribute("count", keyPath: \GadgetV1.count, get: { $0.count }, set: { $0.count = $1 }),
        .attribute("color", keyPath: \GadgetV1.color, get: { $0.color }, set: { $0.color = $1 }),
    ])
}

/// Version 2: `count` renamed to `quantity`, `color` removed, `weight` added with a default.
final class GadgetV2 {
    let _$entityState = EntityState()
    init(_$materializing _: MaterializingToken) {}
    init() {}
    var name: String = ""
    var quantity: Int = 0
    var weight: Double = 1.5
}

extension GadgetV2: PersistentEntity {
    static let _$entity = EntityDescription(GadgetV2.self, name: "Gadget", properties: [
        .attribute("name", keyPath: \GadgetV2.name, get: { $0.name }, set: { $0.name = $1 }, options: [.indexed]),
        .attribute("quantity", keyPath: \GadgetV2.quantity, get: { $0.quantity }, set: { $0.quantity = $1 }, originalName: "count"),
        .attribute("weight", keyPath: \GadgetV2.weight, get: { $0.weight }, set: { $0.weight = $1 }),
    ])
}

/// An impossible change: `name` becomes an integer.
final class GadgetWithIntegerName {
    let _$entityState = EntityState()
    init(_$materializing _: MaterializingToken) {}
    var name: Int = 0
}

extension GadgetWithIntegerName: PersistentEntity {
    static let _$entity = EntityDescription(GadgetWithIntegerName.self, name: "Gadget", properties: [
        .attribute("name", keyPath: \GadgetWithIntegerName.name, get: { $0.name }, set: { $0.name = $1 }),
    ])
}

/// A widget whose inverse is wrong: it names `owner`, but `Gizmo.widgets` names `gizmo`.
final class Widget {
    let _$entityState = EntityState()
    init(_$materializing _: MaterializingToken) {}
    var _gizmo: Gizmo? = nil
}

extension Widget: PersistentEntity {
    static let _$entity = EntityDescription(Widget.self, name: "Widget", properties: [
        .relationship("gizmo", keyPath: \Widget._gizmo, get: { $0._gizmo }, set: { $0._gizmo = $1 }, inverse: "widgets", deleteRule: .nullify),
    ])
}

final class Gizmo {
    let _$entityState = EntityState()
    init(_$materializing _: MaterializingToken) {}
    var _widgets: Set<Widget> = []
}

extension Gizmo: PersistentEntity {
    static let _$entity = EntityDescription(Gizmo.self, name: "Gizmo", properties: [
        .relationship("widgets", keyPath: \Gizmo._widgets, get: { $0._widgets }, modify: { $1(&$0._widgets) }, inverse: "owner", deleteRule: .nullify),
    ])
}
