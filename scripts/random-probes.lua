-- wrk script: every request probes a position drawn at random from the file named by the
-- environment variable POSITIONS (one SFEN a line, as engine/examples/sample_positions.rs
-- prints them).
local paths = {}
for line in io.lines(os.getenv("POSITIONS")) do
  paths[#paths + 1] = "/probe?pos=" .. line:gsub(" ", "_"):gsub("+", "%%2B")
end
math.randomseed(os.time())
request = function()
  return wrk.format("GET", paths[math.random(#paths)])
end
