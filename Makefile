# The two commands a fresh machine needs: `make run` and `make test`.
.PHONY: run test docs example-test bench bootstrap

bootstrap:
	@scripts/bootstrap.sh

# Builds only syncd and what it links (no macro plugin, so no swift-syntax) and starts it on
# localhost:8080 with its SQLite data in ./syncd-data.
run: bootstrap
	swift run -c release syncd serve --data ./syncd-data --port 8080

# Builds and runs every test; the PostgreSQL storage's tests run against a private server that
# scripts/postgres.sh installs (apt) if needed, starts on a free port and removes afterwards.
# Then the deployment's proof (scripts/deploy-proof.sh): three syncd instances on that database
# behind nginx over TLS, eight sync clients, one instance killed and restarted.
test: bootstrap
	scripts/debug-build.sh --build-tests
	OBJECTSYNC_POSTGRES_URL="$$(scripts/postgres.sh start)" && export OBJECTSYNC_POSTGRES_URL && \
	status=0 && { swift test --skip-build || status=$$?; } && \
	{ scripts/deploy-proof.sh "$$(swift build --show-bin-path)" || status=$$?; } && \
	scripts/postgres.sh stop && exit $$status

# The documentation of LocalStore, SyncKit and SyncServer, built with the toolchain's docc into
# .build-docs/; fails on any warning docc reports (scripts/docs.sh).
docs: bootstrap
	scripts/docs.sh

# The Todos example's README walkthrough, run against a real syncd (Examples/Todos/walkthrough.sh).
example-test: bootstrap
	Examples/Todos/walkthrough.sh

# The benchmarks (release build); see the README's performance section. `bench sync` runs the
# release syncd next to the bench binary; scripts/bench-http.sh is the HTTP load test (needs wrk).
bench: bootstrap
	swift build -c release --product syncd
	swift run -c release bench all
