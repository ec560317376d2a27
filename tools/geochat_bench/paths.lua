-- wrk script for every benchmark scenario: each connection cycles through the
-- request paths listed in a file (one per line), starting at a random line, so
-- the hello-world reference, idle polls, region queries and posts all cost wrk
-- the same per request.
--   wrk -t2 -c64 -d10s --latency -s tools/geochat_bench/paths.lua http://127.0.0.1:PORT -- PATHS_FILE
local paths = {}
local next_index = 1

function init(args)
  for line in io.lines(args[1]) do
    if #line > 0 then paths[#paths + 1] = line end
  end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  next_index = math.random(#paths)
end

function request()
  next_index = next_index % #paths + 1
  return wrk.format("GET", paths[next_index])
end

-- One machine-readable line after wrk's own report.
function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local failed = summary.errors.status + summary.errors.connect + summary.errors.read
    + summary.errors.write + summary.errors.timeout
  io.write(string.format(
    "BENCH requests=%d failed=%d seconds=%.3f p50_us=%d p90_us=%d p99_us=%d max_us=%d\n",
    summary.requests, failed, seconds, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max))
end
