import Foundation
@testable import HTTPServer
import SyncKit
import Testing

@testable import SyncServer

@Suite struct MetricsRouteTests {
    @Test func exposesCountersHistogramAndGauge() throws {
        let server = try ServerFixture()
        try server.registerSchema()
        let client = try ClientReplica()
        try client.addBoard("x")
        server.push(try client.batch(), as: try client.credentials).expectOK()
        server.service.setOpenConnectionsSource { 3 }
        server.service.requestCompleted(HTTPRequestSummary(
            method: "GET", path: "/v1/datasets/main/changesets", status: 200, requestBytes: 120, responseBytes: 456,
            duration: .milliseconds(7), remoteAddress: "127.0.0.1:1"))
        server.service.requestCompleted(HTTPRequestSummary(
            method: "BREW", path: "/teapot", status: 404, requestBytes: 10, responseBytes: 20, duration: .seconds(2), remoteAddress: ""))

        let response = server.send(.get, "/metrics", token: nil)
        #expect(response.status == .ok)
        #expect(response.headers["Content-Type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = response.text
        for line in [
            #"syncd_requests_total{method="GET",route="/v1/datasets/{dataset}/changesets",status="200"} 1"#,
            #"syncd_requests_total{method="other",route="unmatched",status="404"} 1"#,
            "# TYPE syncd_request_duration_seconds histogram",
            #"syncd_request_duration_seconds_bucket{le="0.005"} 0"#,
            #"syncd_request_duration_seconds_bucket{le="0.01"} 1"#,
            #"syncd_request_duration_seconds_bucket{le="5"} 2"#,
            #"syncd_request_duration_seconds_bucket{le="+Inf"} 2"#,
            "syncd_request_duration_seconds_count 2",
            #"syncd_changesets_stored_total{dataset="main"} 1"#,
            "# TYPE syncd_log_change_sets gauge",
            #"syncd_log_change_sets{dataset="main"} 1"#,
            "syncd_request_bytes_total 130",
            "syncd_response_bytes_total 476",
            "syncd_open_connections 3",
        ] {
            #expect(text.contains(line + "\n"), "missing \(line) in\n\(text)")
        }
    }

    @Test func accessLogLineHasTheSpecifiedShape() {
        let summary = HTTPRequestSummary(method: "POST", path: "/v1/datasets/main/changesets\nforged", status: 200, requestBytes: 1,
                                         responseBytes: 99, duration: .microseconds(1500), remoteAddress: "10.0.0.1:5000")
        let line = SyncService.logLine(summary, at: Date(timeIntervalSince1970: 1_700_000_000))
        #expect(line == "2023-11-14T22:13:20.000Z 10.0.0.1:5000 POST /v1/datasets/main/changesets%0Aforged 200 99 1.500ms")
    }
}
