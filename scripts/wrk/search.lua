-- Product searches for wrk: the words in $QUERIES in turn, with $EXTRA appended (e.g. "&limit=1"). With MISS set,
-- each request also carries a parameter never sent before, which the search ignores but the answer cache keys on,
-- so every answer is a cache miss.
local queries = {}
for line in io.lines(os.getenv("QUERIES")) do queries[#queries + 1] = line end
local extra = os.getenv("EXTRA") or ""
local miss = os.getenv("MISS") ~= nil
local i = 0
request = function()
  i = i + 1
  local path = "/api/v1/products/search?q=" .. queries[(i % #queries) + 1] .. extra
  if miss then path = path .. "&miss=" .. i .. "-" .. math.random(1, 1000000000) end
  return wrk.format("GET", path)
end
