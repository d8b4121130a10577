import Codecs
import Foundation
import LocalStoreCore

/// Checks the values a batch writes against the schema's declared columns before any of it is
/// applied, so that a receiver never stores a value its apps cannot read back.
///
/// Every `set` of an attribute the schema declares must carry one value per column, each of the
/// SQL type its column holds (a `set` of an entity or attribute the schema does not have is the
/// merge's to refuse, in operation order with the batch's other structural errors):
///
/// | Column type | Accepts |
/// |---|---|
/// | `bool` | the integer 0 or 1 |
/// | `int`, `int64` | any integer |
/// | `int16`, `int32` | an integer that fits `Int16` / `Int32` |
/// | `double`, `date` | a real or an integer |
/// | `float` | a real or an integer within `Float`'s finite range |
/// | `string` | text |
/// | `decimal` | text that reads as a decimal number |
/// | `uuid` | text that reads as a UUID |
/// | `url` | text that reads as a URL |
/// | `json` | valid JSON text |
/// | `data` | a blob |
///
/// `NULL` is accepted only in a nullable column. A real is never accepted in an integer column,
/// even a whole one: the producer wrote the wrong type.
///
/// A `.raw` attribute whose schema lists its `rawValues` (its Swift type is `CaseIterable`)
/// accepts only those values besides `NULL`: a case an app cannot decode is refused like a value
/// of the wrong type. Other `.raw` attributes are checked against their raw type's column alone.
struct ChangeSetValidator: Sendable {
    /// The values a `.raw` attribute's cases store, when the schema lists them.
    final class RawValues: Sendable {
        /// The attribute's Swift type without `?`, for messages.
        let swiftType: String
        let listed: [SQLValue]
        private let allowed: Set<SQLValue>

        init(swiftType: String, listed: [SQLValue]) {
            self.swiftType = swiftType.hasSuffix("?") ? String(swiftType.dropLast()) : swiftType
            self.listed = listed
            allowed = Set(listed)
        }

        /// Whether `value` is the raw value of a case. An integer matches a real raw value of
        /// the same number, as the column stores it either way.
        func contains(_ value: SQLValue) -> Bool {
            if allowed.contains(value) { return true }
            if case .integer(let number) = value { return allowed.contains(.real(Double(number))) }
            return false
        }

        /// The cases' raw values, for messages: at most ten, so a message stays short.
        var expectation: String {
            let shown = listed.prefix(10).map(\.description).joined(separator: ", ")
            return "a raw value of \(swiftType) (\(shown)\(listed.count > 10 ? ", … \(listed.count) in all" : ""))"
        }
    }

    /// One column and the values it accepts.
    struct Column: Sendable {
        let name: String
        let type: AttributeType
        let isNullable: Bool
        /// The only values besides `NULL` the column accepts; `nil` when any value of its type fits.
        var rawValues: RawValues? = nil

        /// Whether `value` may be stored in this column. Builds no strings: it runs on every value
        /// of every merge.
        func accepts(_ value: SQLValue) -> Bool {
            guard fitsType(value) else { return false }
            guard let rawValues, !value.isNull else { return true }
            return rawValues.contains(value)
        }

        /// Whether `value` is of the kind the column's type holds.
        func fitsType(_ value: SQLValue) -> Bool {
            switch value {
            case .null:
                return isNullable
            case .integer(let number):
                switch type {
                case .bool: return number == 0 || number == 1
                case .int, .int64, .double, .date: return true
                case .int16: return Int16(exactly: number) != nil
                case .int32: return Int32(exactly: number) != nil
                case .float: return Float(number).isFinite
                case .decimal, .string, .uuid, .url, .json, .data: return false
                }
            case .real(let number):
                switch type {
                case .double, .date: return number.isFinite
                case .float: return Float(number).isFinite
                default: return false
                }
            case .text(let text):
                switch type {
                case .string: return true
                case .decimal: return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) != nil
                case .uuid: return UUID(storageText: text) != nil
                case .url: return URL(string: text) != nil
                case .json: return JSONValue.isValid(text)
                default: return false
                }
            case .blob:
                return type == .data
            }
        }

        /// What the column accepts instead of `value`, for error messages.
        func expectation(instead value: SQLValue) -> String {
            if let rawValues, fitsType(value) { return rawValues.expectation }
            return typeExpectation
        }

        /// What the column's type holds.
        private var typeExpectation: String {
            switch type {
            case .bool: return "a boolean (the integer 0 or 1)"
            case .int, .int64: return "an integer"
            case .int16: return "an integer from \(Int16.min) to \(Int16.max)"
            case .int32: return "an integer from \(Int32.min) to \(Int32.max)"
            case .float: return "a number within Float's range"
            case .double: return "a number"
            case .date: return "a date (seconds since 1970, a number)"
            case .decimal: return "a decimal number as text"
            case .string: return "text"
            case .uuid: return "a UUID as text"
            case .url: return "a URL as text"
            case .json: return "JSON text"
            case .data: return "a blob"
            }
        }
    }

    /// One attribute of one entity.
    final class Attribute: Sendable {
        let entity: String
        let name: String
        let columns: [Column]
        /// How concurrent writes merge: a counter takes `increment`s, and a `set` only when its object is created.
        let policy: AttributeMergePolicy.Kind

        init(entity: String, name: String, columns: [Column], policy: AttributeMergePolicy.Kind) {
            self.policy = policy
            self.entity = entity
            self.name = name
            self.columns = columns
        }
    }

    /// Entity name → attribute name → attribute.
    private let attributes: [String: [String: Attribute]]
    /// Entities with a counter attribute: only their creations matter to a later `set`'s check.
    private let entitiesWithCounters: Set<String>

    /// The attribute `name` of `entity`, if the schema has it.
    func attribute(_ entity: String, _ name: String) -> Attribute? {
        attributes[entity]?[name]
    }

    /// A validator of the attributes `document` declares.
    init(_ document: SchemaDocument) {
        var attributes: [String: [String: Attribute]] = [:]
        for entity in document.entities {
            attributes[entity.name] = Dictionary(uniqueKeysWithValues: entity.attributes.map { attribute in
                let rawValues = attribute.rawValues.map { RawValues(swiftType: attribute.swiftType, listed: $0) }
                return (attribute.name, Attribute(entity: entity.name, name: attribute.name, columns: attribute.columns.map {
                    Column(name: $0.name, type: $0.type, isNullable: $0.nullable, rawValues: rawValues)
                }, policy: attribute.mergeKind))
            })
        }
        self.attributes = attributes
        entitiesWithCounters = Set(attributes.filter { $0.value.values.contains { $0.policy == .counter } }.keys)
    }

    /// Checks one change set whole (a record edit's, a replay's), and says what the merge needs to
    /// know of it.
    ///
    /// - Throws: ``SyncError`` `.schemaMismatch` for the first violation, as the check of a
    ///   batch does.
    func validate(_ changeSet: ChangeSet) throws -> Findings {
        var created: Set<UUID> = []
        var last: Attribute?
        return try validate(changeSet, startingAt: 0, created: &created, last: &last)
    }

    /// Checks every `set` of every change set in `changeSets`.
    ///
    /// - Throws: ``SyncError`` `.schemaMismatch` for the first violation, naming the change set,
    ///   the operation's index in it, the entity, attribute, object and the offending value.
    func validate(_ changeSets: [ChangeSet]) throws {
        // The attribute the operation before named, kept across change sets (``attribute(_:_:last:)``).
        var last: Attribute?
        for changeSet in changeSets {
            var created: Set<UUID> = []
            try validate(changeSet, startingAt: 0, created: &created, last: &last)
        }
    }

    /// Checks one slice of a change set's operations, `changeSet` holding them; `offset` is the
    /// index of its first operation in the whole change set, and `created` the objects the
    /// change set's earlier slices created (a counter may be set only by its creating change set).
    ///
    /// - Returns: What the check found of the operations besides violations.
    @discardableResult
    func validate(_ changeSet: ChangeSet, startingAt offset: Int, created: inout Set<UUID>, last: inout Attribute?) throws -> Findings {
        var findings = Findings(onlyLastWriterWinsSets: !changeSet.operations.isEmpty)
        for (sliceIndex, operation) in changeSet.operations.enumerated() {
            let index = offset + sliceIndex
            if case .create(let entity, let id) = operation, entitiesWithCounters.contains(entity) { created.insert(id) }
            if case .increment(let entity, let id, let name, _) = operation {
                try checkIncrement(entity, name, id, at: index, of: changeSet, last: &last)
                findings.onlyLastWriterWinsSets = false
                continue
            }
            guard case .set(let entity, let id, let name, let values) = operation else {
                findings.onlyLastWriterWinsSets = false
                continue
            }
            guard let attribute = attribute(entity, name, last: &last) else {
                findings.setsNameKnownAttributes = false
                findings.onlyLastWriterWinsSets = false
                continue
            }
            if attribute.policy != .lastWriterWins { findings.onlyLastWriterWinsSets = false }
            guard attribute.policy != .counter || created.contains(id) else {
                throw SyncError(.schemaMismatch, "\(ChangeSetValidator.place(index, of: changeSet)) sets \(entity).\(name) of \(id.storageText), a counter (merge: .counter): after its creation a counter takes only increment operations")
            }
            guard values.count == attribute.columns.count else {
                throw SyncError(.schemaMismatch, "\(ChangeSetValidator.place(index, of: changeSet)) sets \(entity).\(name) of \(id.storageText) with \(values.count) value(s); it has \(attribute.columns.count) column(s)")
            }
            for (column, value) in zip(attribute.columns, values) where !column.accepts(value) {
                throw ChangeSetValidator.violation(column, value, attribute: attribute, id: id, at: index, of: changeSet)
            }
        }
        return findings
    }

    /// What ``validate(_:startingAt:created:last:)`` found of a change set's operations.
    struct Findings {
        /// Whether every `set` named an attribute the schema has (a `set` of one it does not have
        /// is not checked).
        var setsNameKnownAttributes = true
        /// Whether every operation is a `set` of a last-writer-wins attribute the schema has: the
        /// merge resolves such change sets together, object by object (``SetRun``).
        var onlyLastWriterWinsSets: Bool
    }

    /// The schema's attribute `entity.name`, nil if it has none. `last` is the one the operation
    /// before named: a batch names the same few again and again, and comparing two short names
    /// costs less than hashing them.
    private func attribute(_ entity: String, _ name: String, last: inout Attribute?) -> Attribute? {
        if let last, last.name == name, last.entity == entity { return last }
        guard let known = attributes[entity]?[name] else { return nil }
        last = known
        return known
    }

    /// An `increment` must name a counter; an unknown attribute is left to the merge, which reports it.
    private func checkIncrement(_ entity: String, _ name: String, _ id: UUID, at index: Int, of changeSet: ChangeSet,
                                last: inout Attribute?) throws {
        guard let attribute = attribute(entity, name, last: &last), attribute.policy != .counter else { return }
        throw SyncError(.schemaMismatch, "\(ChangeSetValidator.place(index, of: changeSet)) increments \(entity).\(name) of \(id.storageText), which is not a counter (merge: .\(attribute.policy.rawValue)); only a counter takes increments")
    }

    private static func place(_ index: Int, of changeSet: ChangeSet) -> String {
        "change set \(changeSet.dot), operation \(index):"
    }

    private static func violation(_ column: Column, _ value: SQLValue, attribute: Attribute, id: UUID, at index: Int, of changeSet: ChangeSet) -> SyncError {
        let target = "\(place(index, of: changeSet)) sets \(attribute.entity).\(attribute.name) of \(id.storageText)"
        let columnName = attribute.columns.count == 1 ? "" : " (column \(column.name))"
        if value.isNull {
            return SyncError(.schemaMismatch, "\(target) to NULL\(columnName), but it is not optional")
        }
        return SyncError(.schemaMismatch, "\(target) to \(value.storageClassName) \(shortDescription(of: value))\(columnName), but it holds \(column.expectation(instead: value))")
    }

    /// The value as SQL writes it, cut short before it is rendered: a message must stay short
    /// whatever a client sent.
    private static func shortDescription(of value: SQLValue) -> String {
        switch value {
        case .text(let text) where text.count > 120:
            return SQLValue.text(String(text.prefix(120))).description + "…"
        case .blob(let data) where data.count > 48:
            return SQLValue.blob(data.prefix(48)).description + "… (\(data.count) bytes)"
        default:
            return value.description
        }
    }
}
