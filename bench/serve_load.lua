-- wrk script of bench/run_serve_load: each request takes the next path of a mix of what a person
-- watching `mend serve` and a Prometheus scraper ask for. wrk counts non-2xx answers itself.
local paths = {
  "/api/v1/runs?limit=20",
  "/api/v1/runs?limit=20&status=completed",
  "/api/v1/pending?limit=20",
  "/api/v1/runs/" .. (os.getenv("MEND_LOAD_RUN") or "load-1"),
  "/api/v1/memory/search?q=deploy%20window&k=5",
  "/api/v1/lessons",
  "/api/v1/traces?limit=20",
  "/metrics",
  "/readyz",
}
local i = 0

request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1])
end
