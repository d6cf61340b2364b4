#!/usr/bin/env bash
# PerfTest against Ganglion and against RabbitMQ (Debian's rabbitmq-server, single node,
# durable classic queues) on this machine, in one run, and a table of the figures.
#
#   bench/perftest-single.sh [seconds per run, default 30]
#
# Needs: Temurin 25, Maven Central (PerfTest 2.22.1 is fetched by bench/perftest/pom.xml),
# and `apt-get install rabbitmq-server` for the RabbitMQ side (skipped if absent).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-30}"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
java="$JAVA_HOME/bin/java"
work="$(mktemp -d /tmp/ganglion-perftest.XXXXXX)"
ganglion_port=5790
rabbit_port=5791
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ -n "${rabbit_env:-}" ]; then (eval "$rabbit_env"; /usr/lib/rabbitmq/bin/rabbitmqctl -n "$RABBITMQ_NODENAME" stop >/dev/null 2>&1 || true); fi
  rm -rf "$work"
}
trap cleanup EXIT

(cd "$root" && ./mvnw -q -B -f bench/perftest/pom.xml dependency:copy-dependencies -DoutputDirectory=target/lib >&2)
perftest=("$java" -cp "$root/bench/perftest/target/lib/*" com.rabbitmq.perf.PerfTest)

wait_port() {
  for _ in $(seq 1 600); do (echo > "/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done
  echo "nothing listens on $1" >&2; return 1
}

run() { # name uri queue-args...
  local name="$1" uri="$2"; shift 2
  local log="$work/$name.log"
  "${perftest[@]}" -h "$uri" -ad false -f persistent -s 100 -c 1000 -z "$seconds" "$@" > "$log" 2>&1
  local sent confirm
  sent=$(grep -oE 'sending rate avg: [0-9]+' "$log" | grep -oE '[0-9]+$' | head -1)
  confirm=$(grep -E 'confirm latency min/median/75th/95th/99th' "$log" | tail -1 | grep -oE '[0-9]+/[0-9]+/[0-9]+/[0-9]+/[0-9]+')
  echo "$name $sent ${confirm//\// }"
}

scenarios() { # label uri
  run "$1-1q" "$2" -x 1 -y 1 -u "perf-single"
  run "$1-4q" "$2" -x 4 -y 4 --queue-pattern 'perf-%d' --queue-pattern-from 1 --queue-pattern-to 4
}

"$root/bin/ganglion" server --set data.dir="$work/ganglion" --set amqp.port=$ganglion_port --set http.port=15790 \
  > "$work/ganglion.out" 2>&1 &
pids+=($!)
wait_port $ganglion_port
results=$(scenarios ganglion "amqp://guest:guest@127.0.0.1:$ganglion_port")
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true; pids=()

if [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then
  mkdir -p "$work/rabbit"
  echo "[]." > "$work/rabbit/enabled_plugins"
  echo "loopback_users = none" > "$work/rabbit/rabbitmq.conf"
  rabbit_env="export HOME=$work/rabbit RABBITMQ_NODENAME=perftest@localhost RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
RABBITMQ_NODE_PORT=$rabbit_port RABBITMQ_DIST_PORT=25791 RABBITMQ_MNESIA_BASE=$work/rabbit/mnesia \
RABBITMQ_LOG_BASE=$work/rabbit/log RABBITMQ_ENABLED_PLUGINS_FILE=$work/rabbit/enabled_plugins \
RABBITMQ_CONFIG_FILE=$work/rabbit/rabbitmq"
  (eval "$rabbit_env"; exec /usr/lib/rabbitmq/bin/rabbitmq-server) > "$work/rabbit.out" 2>&1 &
  pids+=($!)
  wait_port $rabbit_port
  results="$results"$'\n'"$(scenarios rabbitmq "amqp://guest:guest@127.0.0.1:$rabbit_port")"
else
  echo "rabbitmq-server is not installed: apt-get install rabbitmq-server for the comparison" >&2
fi

echo
echo "PerfTest 2.22.1, -s 100 -c 1000 -f persistent, ${seconds}s per run; latencies in µs"
printf '%-14s %10s %10s %10s %10s\n' run "msg/s" "confirm-p50" "confirm-p95" "confirm-p99"
while read -r name sent min p50 p75 p95 p99; do
  printf '%-14s %10s %10s %10s %10s\n' "$name" "$sent" "$p50" "$p95" "$p99"
done <<< "$results"
for shape in 1q 4q; do
  g=$(awk -v n="ganglion-$shape" '$1==n {print $2}' <<< "$results")
  r=$(awk -v n="rabbitmq-$shape" '$1==n {print $2}' <<< "$results")
  gp=$(awk -v n="ganglion-$shape" '$1==n {print $7}' <<< "$results")
  rp=$(awk -v n="rabbitmq-$shape" '$1==n {print $7}' <<< "$results")
  if [ -n "$g" ] && [ -n "$r" ]; then
    awk -v s="$shape" -v g="$g" -v r="$r" -v gp="$gp" -v rp="$rp" \
      'BEGIN { printf "%s: Ganglion/RabbitMQ throughput %.2fx, p99 confirm latency %.2fx\n", s, g/r, gp/rp }'
  fi
done
