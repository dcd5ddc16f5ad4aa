-- A web UI's request mix for wrk: the paths serve_query wrote to paths.txt, in turn,
-- on every connection. Non-2xx answers are counted and printed at the end.
local paths = {}
for line in io.lines("paths.txt") do paths[#paths + 1] = line end
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
local bad = 0
response = function(status, headers, body)
  if status ~= 200 then bad = bad + 1 end
end
done = function(summary, latency, requests)
  io.write(string.format("requests: %d, errors (non-200, socket): %d, %d\n", summary.requests,
    bad, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
