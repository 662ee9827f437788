-- wrk script: one request in KEEP_EVERY keeps its session (no cookie is sent
-- back, so each opens a new one); the others drop theirs.
local n = 0
local every = tonumber(os.getenv("KEEP_EVERY") or "10")
request = function()
  n = n + 1
  if n % every == 0 then return wrk.format("GET", "/cart") end
  return wrk.format("GET", "/cart?drop=1")
end
