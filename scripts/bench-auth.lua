-- wrk script for scripts/bench-http.sh: every request carries the bearer token.
-- The token comes from the environment (SYNCD_TOKEN), so it never lands in the command line.
wrk.headers["Authorization"] = "Bearer " .. os.getenv("SYNCD_TOKEN")
