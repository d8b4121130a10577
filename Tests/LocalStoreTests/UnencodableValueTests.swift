import Foundation
import LocalStore
import Testing
import TestSupport

/// `.codable` values JSON cannot express (a non-finite `Double`) fail the save with an error
/// naming what could not be stored, instead of stopping the process.
enum UnencodableFixture {
    struct Reading: Codable, Equatable { var value: Double }

    @Entity final class Sensor {
        var name: String = ""
        @Attribute(storage: .codable) var reading: Reading = Reading(value: 0)
        @Attribute(storage: .codable) var lastReading: Reading? = nil
    }

    @Entity final class BrokenDefault {
        @Attribute(storage: .codable) var reading: Reading = Reading(value: .infinity)
    }
}

@Suite struct UnencodableValueTests {
    typealias Sensor = UnencodableFixture.Sensor
    let file = TemporaryStoreFile()

    @Test func insertingANaNThrowsNamingEntityAttributeAndObject() throws {
        let store = try ObjectStore(path: file.path, entities: [Sensor.self])
        let context = try store.makeContext()
        let sensor = Sensor()
        sensor.reading = .init(value: .nan)
        context.insert(sensor)
        let error = try #require(throws: StoreError.self) { try context.save() }
        #expect(error.code == .unencodableValue)
        #expect(error.entity == "Sensor")
        #expect(error.attribute == "reading")
        #expect(error.objectID == sensor.objectID)
        #expect(error.message.contains("Reading"), "\(error.message)")
        #expect(try store.makeContext().fetchCount(FetchDescriptor<Sensor>()) == 0, "nothing was written")

        // The context keeps the insert: fixing the value lets the same save go through.
        sensor.reading = .init(value: 1.5)
        try context.save()
        #expect(try store.makeContext().fetchAll(Sensor.self).map(\.reading) == [.init(value: 1.5)])
    }

    @Test func updatingToANaNThrowsAndRollbackRestoresTheSavedValue() throws {
        let store = try ObjectStore(path: file.path, entities: [Sensor.self])
        let context = try store.makeContext()
        let sensor = Sensor()
        sensor.lastReading = .init(value: 2)
        context.insert(sensor)
        try context.save()

        sensor.lastReading = .init(value: -.infinity)
        let error = try #require(throws: StoreError.self) { try context.save() }
        #expect(error.code == .unencodableValue)
        #expect(error.attribute == "lastReading")
        #expect(error.objectID == sensor.objectID)
        #expect(context.hasChanges)
        context.rollback()
        #expect(sensor.lastReading == .init(value: 2))
        #expect(try store.makeContext().fetchAll(Sensor.self).map(\.lastReading) == [.init(value: 2)])
    }

    @Test func aDefaultValueJSONCannotExpressIsASchemaError() throws {
        let error = try #require(throws: StoreError.self) {
            _ = try ObjectStore(path: file.path, entities: [UnencodableFixture.BrokenDefault.self])
        }
        #expect(error.code == .invalidSchema)
        #expect(error.entity == "BrokenDefault")
        #expect(error.attribute == "reading")
    }
}
