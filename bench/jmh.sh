#!/usr/bin/env bash
# The JMH micro-benchmarks of bench/src/jmh/java (storage appends, the AMQP codec): builds the bench module, then runs
# JMH with the given options, e.g. bench/jmh.sh -f 1 -wi 1 -i 2 -r 1s StorageBenchmark (-h lists JMH's options).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
(cd "$root" && ./mvnw -q -B -o -DskipTests -Dspotless.check.skip=true -Denforcer.skip=true package -pl bench -am >&2 \
  || ./mvnw -q -B -DskipTests -Dspotless.check.skip=true -Denforcer.skip=true package -pl bench -am >&2)
target="$root/bench/target"
exec "$JAVA_HOME/bin/java" -cp "$target/test-classes:$target/classes:$(cat "$target/jmh.classpath")" \
  org.openjdk.jmh.Main "$@"
