#!/usr/bin/env bash
# Regenerates the figures of README.md's "Performance" section. Every throughput and latency
# figure is the median of three runs (a shared 2-CPU machine varies ±30% from one run to the
# next); the scale and retention runs are long and run once. Needs go and jq.
#
#   scripts/figures.sh            # everything (about 25 minutes, 3 GiB of disk in $TMPDIR)
#   scripts/figures.sh quick      # throughput, latency and memory only (about 3 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."

out=${TMPDIR:-/tmp}/approvebot-figures
mkdir -p "$out"
bin=$out/approvebot
load=$out/approvebot-load
go build -o "$bin" ./cmd/approvebot
go build -o "$load" ./cmd/approvebot-load

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(go version)"

# median FILE… JQ: the median of one jq expression over the reports.
median() {
  local expr=$1; shift
  for f in "$@"; do jq -r "$expr" "$f"; done | sort -g | awk '{v[NR]=$1} END {printf "%.1f\n", v[int((NR+1)/2)]}'
}

three() { # three NAME ARGS…: run the load tool three times with ARGS, JSON reports in $out/NAME.{1,2,3}.json
  local name=$1; shift
  for i in 1 2 3; do
    "$load" -bin "$bin" -json "$@" > "$out/$name.$i.json" 2>"$out/$name.$i.log" || {
      echo "$name run $i failed:"; tail -5 "$out/$name.$i.log"; exit 1; }
  done
}

echo
echo "== policy-decided throughput (target: >= 20,000 req/s, each durably audited, 0 errors)"
three policy -agents 128 -duration 10s -mix allowed=70,denied=15,floor=15 -log-level warn
echo "req/s:                    $(median .load.policy_decided_rps "$out"/policy.?.json)"
echo "server CPU per request:   $(median .load.server_cpu_us_per_request "$out"/policy.?.json) µs"
echo "load tool CPU per request: $(median '.load.client_cpu_s * 1e6 / .load.policy_decided' "$out"/policy.?.json) µs"
echo "p50 / p99 (allowed):      $(median .load.kinds.allowed.p50_ms "$out"/policy.?.json) / $(median .load.kinds.allowed.p99_ms "$out"/policy.?.json) ms"
echo "errors (worst run):       $(for f in "$out"/policy.?.json; do jq .load.error_count "$f"; done | sort -n | tail -1)"

echo
echo "== a human decision reaches the waiting agent (one agent)"
three human -agents 1 -duration 10s -mix human=1 -think 20ms
echo "press -> agent p50 / p99: $(median .load.press_to_agent.p50_ms "$out"/human.?.json) / $(median .load.press_to_agent.p99_ms "$out"/human.?.json) ms"

echo
echo "== 10,000 requests pending at once (target: under 200 MB RSS)"
three hold -hold 10000 -hold-poll=false
echo "RSS while held: $(median '.hold.rss_held_bytes / 1048576' "$out"/hold.?.json) MiB"

echo
echo "== request path in-process (no HTTP transport)"
go test -run '^$' -bench 'HTTPPolicyDecided' -benchtime 3s -count 3 ./api/ | grep Benchmark
go test -run '^$' -bench 'GatePolicyDecided' -benchtime 3s -count 3 ./core/gate/ | grep Benchmark

[ "${1:-}" = quick ] && exit 0

echo
echo "== the store: CPU per stored request, persisted freelist against the walked one (6 interleaved runs)"
for i in 1 2 3 4 5 6; do
  for fl in persisted walked; do
    go test -run '^$' -bench "CreateDecided/freelist=$fl" -benchtime 40000x ./store/ | grep Benchmark
  done
done

echo
echo "== scale: 50k, 300k and 1M stored requests (targets: start-up < 100 ms at 1M, queries within 2x of 50k)"
rm -rf "$out/scale" && mkdir -p "$out/scale"
"$load" -bin "$bin" -dir "$out/scale" -scale 50000,300000,1000000 -queries 50
echo "compacting the 1M file (nothing to give back: it only grew)"
"$bin" compact -db "$out/scale/approvebot.db"
rm -rf "$out/scale"

echo
echo "== retention bounds the file (90 s of load; the file must level off)"
"$load" -bin "$bin" -agents 64 -duration 90s -mix allowed=70,denied=15,floor=15 -log-level warn \
  -audit-max-entries 100000 -size-every 10s | grep -E 'policy-decided|bbolt file'
"$load" -bin "$bin" -agents 64 -duration 90s -mix allowed=70,denied=15,floor=15 -log-level warn \
  -audit-retention 15s -size-every 10s | grep -E 'policy-decided|bbolt file'
