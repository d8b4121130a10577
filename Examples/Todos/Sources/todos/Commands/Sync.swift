import Foundation
import SyncKit

/// `todos sync [--server URL] [--dataset NAME] [--token TOKEN]` (placeholder until SyncClient lands)
@MainActor enum SyncCommand {
    static let help = """
        Usage: todos sync [--server URL] [--dataset NAME] [--token TOKEN]
        """

    static func run(_ arguments: [String], store: () throws -> TodoStore) async throws {
        throw ToolError("sync is not available yet")
    }
}
