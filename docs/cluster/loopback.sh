#!/usr/bin/env bash
# The topology of docs/cluster/compose.yaml on one machine's loopback, without a container
# engine: three etcd members, two approvebot replicas on them, and haproxy in front.
#
#   docs/cluster/loopback.sh start DIR   # start everything, state and logs under DIR
#   docs/cluster/loopback.sh stop DIR    # stop everything started in DIR
#
# Needs etcd (Debian: etcd-server), haproxy, and approvebot on PATH (or APPROVEBOT=path).
# Ports: BASE_PORT (default 23790) and up: etcd clients BASE..BASE+2, etcd peers BASE+10..12,
# replicas BASE+20 and BASE+21, haproxy BASE+30. Agents and operators use the haproxy
# address; the tokens are in DIR/env (source it). A config for the chat platforms can be
# appended with EXTRA_CONFIG=file (its [channels.*] sections go to both replicas).
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 2
fi
base=${BASE_PORT:-23790}
etcd_bin=${ETCD_BIN:-$(command -v etcd || echo /usr/bin/etcd)}
approvebot=${APPROVEBOT:-$(command -v approvebot || true)}
haproxy_bin=${HAPROXY:-$(command -v haproxy || echo /usr/sbin/haproxy)}

stop() {
  # The load balancer and the replicas first (they resign their leaderships), etcd last.
  for pidfile in "$dir"/haproxy.pid "$dir"/replica*.pid "$dir"/etcd*.pid; do
    [ -e "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  done
}

wait_http() { # url what
  for _ in $(seq 300); do
    if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "$2 did not come up ($1); see $dir/*.log" >&2
  return 1
}

case "$cmd" in
stop)
  stop
  exit 0
  ;;
start) ;;
*)
  echo "unknown command $cmd" >&2
  exit 2
  ;;
esac

[ -x "$etcd_bin" ] || { echo "no etcd at $etcd_bin (apt-get install etcd-server)" >&2; exit 1; }
[ -x "$haproxy_bin" ] || { echo "no haproxy at $haproxy_bin (apt-get install haproxy)" >&2; exit 1; }
[ -n "$approvebot" ] && [ -x "$approvebot" ] || { echo "no approvebot binary (set APPROVEBOT)" >&2; exit 1; }
mkdir -p "$dir"
trap 'stop' ERR

# --- three etcd members. Heartbeat and election timeouts are raised for a busy machine: at
# etcd's defaults (100 ms / 1 s) CPU starvation alone elects new leaders.
cluster=""
for i in 0 1 2; do
  cluster+="${cluster:+,}e$i=http://127.0.0.1:$((base + 10 + i))"
done
endpoints=""
for i in 0 1 2; do
  client="http://127.0.0.1:$((base + i))"
  endpoints+="${endpoints:+, }\"$client\""
  "$etcd_bin" --name "e$i" --data-dir "$dir/etcd$i" \
    --listen-client-urls "$client" --advertise-client-urls "$client" \
    --listen-peer-urls "http://127.0.0.1:$((base + 10 + i))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((base + 10 + i))" \
    --initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token approvebot-loopback \
    --heartbeat-interval 200 --election-timeout 2000 \
    --auto-compaction-mode periodic --auto-compaction-retention 1h \
    --logger zap --log-level warn >"$dir/etcd$i.log" 2>&1 &
  echo $! >"$dir/etcd$i.pid"
done
for i in 0 1 2; do
  wait_http "http://127.0.0.1:$((base + i))/health" "etcd e$i"
done

# --- two approvebot replicas with one config: the same tokens, the same prefix.
if [ ! -e "$dir/env" ]; then
  {
    echo "export APPROVEBOT_AGENT_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    echo "export APPROVEBOT_OPERATOR_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    echo "export APPROVEBOT_URL=http://127.0.0.1:$((base + 30))"
  } >"$dir/env"
  chmod 600 "$dir/env"
fi
# shellcheck disable=SC1091
. "$dir/env"
for r in 0 1; do
  cat >"$dir/replica$r.toml" <<EOF
[server]
listen = "127.0.0.1:$((base + 20 + r))"
data = "$dir/replica$r.db"

[store]
backend = "etcd"

[store.etcd]
endpoints = [$endpoints]
prefix = "/approvebot/"

[[agents]]
name = "agent"
token_env = "APPROVEBOT_AGENT_TOKEN"
role = "agent"

[[agents]]
name = "oncall"
token_env = "APPROVEBOT_OPERATOR_TOKEN"
role = "operator"
EOF
  if [ -n "${EXTRA_CONFIG:-}" ]; then
    cat "$EXTRA_CONFIG" >>"$dir/replica$r.toml"
  fi
  "$approvebot" serve -config "$dir/replica$r.toml" >"$dir/replica$r.log" 2>&1 &
  echo $! >"$dir/replica$r.pid"
done
for r in 0 1; do
  wait_http "http://127.0.0.1:$((base + 20 + r))/healthz" "replica $r"
done

# --- haproxy: round robin over the replicas, a replica out while its /healthz fails (a
# replica cut off from etcd answers 503 there). Long-polls hold a request open for up to
# max_wait, so the server timeout is above it.
cat >"$dir/haproxy.cfg" <<EOF
global
  maxconn 4000
defaults
  mode http
  timeout connect 2s
  timeout client 11m
  timeout server 11m
  option redispatch
  retries 2
frontend approvebot
  bind 127.0.0.1:$((base + 30))
  default_backend replicas
backend replicas
  balance roundrobin
  option httpchk GET /healthz
  http-check expect status 200
  default-server inter 1s fall 2 rise 2
  server r0 127.0.0.1:$((base + 20)) check
  server r1 127.0.0.1:$((base + 21)) check
EOF
"$haproxy_bin" -f "$dir/haproxy.cfg" -db >"$dir/haproxy.log" 2>&1 &
echo $! >"$dir/haproxy.pid"
wait_http "http://127.0.0.1:$((base + 30))/healthz" "haproxy"
trap - ERR
echo "approvebot on etcd: agents and operators use http://127.0.0.1:$((base + 30)) (tokens: . $dir/env)"
echo "replicas: http://127.0.0.1:$((base + 20)) http://127.0.0.1:$((base + 21)); etcd: $endpoints"
