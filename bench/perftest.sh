#!/usr/bin/env bash
# PerfTest 2.22.1 against a three-broker Ganglion cluster and against three RabbitMQ nodes
# (Debian's rabbitmq-server), both started on this machine, quorum queues, side by side:
# (a) 1 queue -s 100, (b) 1 queue -s 1000, (c) 4 queues -s 100; -c 1000 -f persistent.
#
#   bench/perftest.sh [seconds per run, default 30] [more `bench perftest` options, e.g. --jfr]
#
# Needs: Temurin 25, Maven Central (PerfTest is fetched by bench/perftest/pom.xml), and
# `apt-get install rabbitmq-server` for the RabbitMQ side.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-30}"
shift || true
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
(cd "$root" && ./mvnw -q -B -f bench/perftest/pom.xml dependency:copy-dependencies -DoutputDirectory=target/lib >&2)
# both targets unless the options name them (picocli adds a second --targets to the first)
targets=(--targets ganglion,rabbitmq)
[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] || { echo "rabbitmq-server is not installed: Ganglion only" >&2; targets=(--targets ganglion); }
for arg in "$@"; do
  case "$arg" in --targets|--targets=*) targets=() ;; esac
done
exec "$root/bin/ganglion" bench perftest --seconds "$seconds" "${targets[@]}" \
  --perftest-lib "$root/bench/perftest/target/lib" "$@"
