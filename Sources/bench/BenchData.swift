import Foundation

// The input both sides of the store benchmark write: generated once, before any timing, so
// LocalStore and the raw C API store exactly the same values. Object ids are not part of it:
// LocalStore generates one per new object, so the raw baseline generates one per new row.

/// The values of one person, as plain Swift values.
struct PersonRecord {
    let name: String
    let email: String
    let age: Int
    let score: Double?
    let born: Date?
    let isActive: Bool
    let mood: Mood
    let token: UUID?
    /// Index into the places of the same run.
    let place: Int
}

/// The values of one place.
struct PlaceRecord {
    let name: String
}

/// Deterministic benchmark input, with some `nil`s in the optional columns so both sides
/// handle `NULL` as well.
enum BenchData {
    /// How many places the people of a run share.
    static let placeCount = 100

    static func places() -> [PlaceRecord] {
        (0..<placeCount).map { PlaceRecord(name: "Place \($0)") }
    }

    static func people(count: Int) -> [PersonRecord] {
        let moods = Mood.allCases
        return (0..<count).map { index in
            let score: Double? = index % 4 == 0 ? nil : Double(index) * 0.25
            let born: Date? = index % 5 == 0 ? nil : Date(timeIntervalSince1970: 600_000_000 + Double(index) * 3_600)
            let token: UUID? = index % 10 == 0 ? nil : UUID()
            return PersonRecord(
                name: "Person \(index)", email: "person\(index)@example.com", age: index % 90,
                score: score, born: born, isActive: index % 2 == 0, mood: moods[index % moods.count],
                token: token, place: index % placeCount)
        }
    }
}
