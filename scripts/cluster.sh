#!/usr/bin/env bash
# A Spark standalone cluster on this machine for the `cluster` profile target: one master and
# two workers, started from the pip pyspark install, all bound to 127.0.0.1.
#
#   scripts/cluster.sh start    start what is not running, wait until both workers registered
#   scripts/cluster.sh stop     stop the workers and the master (TERM, wait, KILL) by pid
#   scripts/cluster.sh status   what runs, and what the master reports
#
# Settings (environment):
#   REFRESHABLE_CLUSTER_PORT          master port (default 7077); the profile reads it too
#   REFRESHABLE_CLUSTER_WEBUI_PORT    master web UI and JSON status port (default 8080)
#   REFRESHABLE_CLUSTER_STATE         pids, logs and worker dirs (default .spark/cluster)
#   REFRESHABLE_CLUSTER_WORKER_CORES  cores per worker (default 1)
#   REFRESHABLE_CLUSTER_WORKER_MEMORY memory per worker for executors (default 2g)
#   REFRESHABLE_CLUSTER_TIMEOUT       seconds to wait for the workers (default 90)
# Worker RPC and web UI ports are picked free by Spark (on 127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

port=${REFRESHABLE_CLUSTER_PORT:-7077}
webui_port=${REFRESHABLE_CLUSTER_WEBUI_PORT:-8080}
state=${REFRESHABLE_CLUSTER_STATE:-$root/.spark/cluster}
worker_cores=${REFRESHABLE_CLUSTER_WORKER_CORES:-1}
worker_memory=${REFRESHABLE_CLUSTER_WORKER_MEMORY:-2g}
timeout=${REFRESHABLE_CLUSTER_TIMEOUT:-90}
workers=(worker1 worker2)
master_class=org.apache.spark.deploy.master.Master
worker_class=org.apache.spark.deploy.worker.Worker

say() { printf '[cluster] %s\n' "$*"; }
die() { printf '[cluster] error: %s\n' "$*" >&2; exit 1; }

for value in "$port" "$webui_port" "$worker_cores" "$timeout"; do
  [[ $value =~ ^[0-9]+$ ]] || die "expected a number, got '$value' (check the REFRESHABLE_CLUSTER_* variables)"
done
[ "$port" != "$webui_port" ] || die "REFRESHABLE_CLUSTER_PORT and REFRESHABLE_CLUSTER_WEBUI_PORT are both $port"

python=${PYTHON:-$root/.venv/bin/python}
[ -x "$python" ] || die "no $python: run \`make setup\` first"

pid_file() { echo "$state/$1.pid"; }
ports_file="$state/ports"
log_file() { echo "$state/$1.log"; }
class_of() { if [ "$1" = master ]; then echo "$master_class"; else echo "$worker_class"; fi; }

# The pid of a running daemon `name` started from this state dir, or nothing. A pid file whose
# process is gone, or is now some other program (pid reuse), is stale and removed.
running_pid() {
  local name=$1 file pid
  file=$(pid_file "$name")
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if [[ $pid =~ ^[0-9]+$ ]] && [ -r "/proc/$pid/cmdline" ] \
    && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$(class_of "$name")"; then
    echo "$pid"
  else
    rm -f "$file"
  fi
}

# A running cluster keeps the ports it was started with: status and start use those, and
# starting it again on other ports is an error rather than a second master.
if [ -f "$ports_file" ] && [ -n "$(running_pid master)" ]; then
  read -r running_port running_webui_port <"$ports_file"
  if [ "${1:-}" = start ] && { [ "${REFRESHABLE_CLUSTER_PORT:-$running_port}" != "$running_port" ] \
    || [ "${REFRESHABLE_CLUSTER_WEBUI_PORT:-$running_webui_port}" != "$running_webui_port" ]; }; then
    die "the cluster in $state runs on ports $running_port (master) and $running_webui_port (web UI); \`scripts/cluster.sh stop\` it first, or use another REFRESHABLE_CLUSTER_STATE"
  fi
  port=$running_port webui_port=$running_webui_port
fi
master_url="spark://127.0.0.1:$port"
status_url="http://127.0.0.1:$webui_port/json/"

port_free() {
  "$python" - "$1" <<'EOF'
import socket, sys
with socket.socket() as s:
    # like the JVM's servers: connections of a previous run in TIME_WAIT do not count
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", int(sys.argv[1])))
    except OSError:
        sys.exit(1)
EOF
}

# The master's JSON status, or nothing when it does not answer with one (a web UI that is
# starting may send an empty page).
master_json() {
  "$python" - "$status_url" <<'EOF' 2>/dev/null || true
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=3) as response:
    text = response.read().decode()
json.loads(text)
print(text)
EOF
}

alive_workers() {
  master_json | "$python" -c '
import json, sys
text = sys.stdin.read()
print(sum(w.get("state") == "ALIVE" for w in json.loads(text).get("workers", [])) if text else 0)'
}

tails() {
  local name
  for name in master "${workers[@]}"; do
    [ -f "$(log_file "$name")" ] || continue
    printf '\n[cluster] --- last lines of %s ---\n' "$(log_file "$name")" >&2
    tail -n 25 "$(log_file "$name")" >&2
  done
}

spark_home() {
  "$python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null \
    || die "pyspark is not installed in $python: run \`make setup\`"
}

# Start `name` in a session of its own (a Ctrl-C of the caller does not reach it); the pid
# written is the JVM's own (spark-class and the bash before it exec into java).
launch() {
  local name=$1; shift
  : >"$(log_file "$name")"
  nohup setsid bash -c 'echo $$ >"$0"; exec "$@"' "$(pid_file "$name")" \
    "$SPARK_HOME/bin/spark-class" "$@" >>"$(log_file "$name")" 2>&1 </dev/null &
  local waited=0
  until [ -s "$(pid_file "$name")" ]; do
    sleep 0.1; waited=$((waited + 1))
    [ $waited -lt 100 ] || { tails; die "$name did not start"; }
  done
  say "started $name (pid $(cat "$(pid_file "$name")"), log $(log_file "$name"))"
}

start() {
  mkdir -p "$state"
  export SPARK_HOME
  SPARK_HOME=$(spark_home)
  export SPARK_LOCAL_IP=127.0.0.1 SPARK_LOCAL_HOSTNAME=127.0.0.1
  # a Python UDF's executor runs `python3` from the workers' PATH: the project's virtualenv
  PATH="$(dirname "$python"):$PATH"
  export SPARK_DAEMON_MEMORY=${SPARK_DAEMON_MEMORY:-512m}
  # no spark-env.sh or spark-defaults.conf from elsewhere; the REST submission server stays off
  export SPARK_CONF_DIR=$state/conf
  mkdir -p "$SPARK_CONF_DIR"
  export SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false"
  # each application's executors fetch Delta's jars (~90 MB) into the worker dir: drop the
  # folders of finished applications after half an hour
  export SPARK_WORKER_OPTS="-Dspark.worker.cleanup.enabled=true -Dspark.worker.cleanup.interval=600 -Dspark.worker.cleanup.appDataTtl=1800"

  if [ -n "$(running_pid master)" ]; then
    say "master already running (pid $(running_pid master))"
  else
    port_free "$port" || die "port $port (REFRESHABLE_CLUSTER_PORT) on 127.0.0.1 is in use by another program: pick another port, or \`scripts/cluster.sh status\`"
    port_free "$webui_port" || die "port $webui_port (REFRESHABLE_CLUSTER_WEBUI_PORT) on 127.0.0.1 is in use by another program: pick another port"
    echo "$port $webui_port" >"$ports_file"
    launch master "$master_class" --host 127.0.0.1 --port "$port" --webui-port "$webui_port"
  fi

  local name
  for name in "${workers[@]}"; do
    if [ -n "$(running_pid "$name")" ]; then
      say "$name already running (pid $(running_pid "$name"))"
      continue
    fi
    mkdir -p "$state/$name"
    launch "$name" "$worker_class" --host 127.0.0.1 --port 0 --webui-port 0 \
      --cores "$worker_cores" --memory "$worker_memory" --work-dir "$state/$name" "$master_url"
  done

  say "waiting up to ${timeout}s for ${#workers[@]} workers to register with $master_url"
  local deadline=$((SECONDS + timeout)) alive=0
  while :; do
    # the master lists them ALIVE, and each worker (its log is new at each launch) says so
    alive=$(alive_workers)
    if [ "$alive" -ge "${#workers[@]}" ] && ! for name in "${workers[@]}"; do
      grep -q "Successfully registered with master" "$(log_file "$name")" || echo no
    done | grep -q no; then
      break
    fi
    for name in master "${workers[@]}"; do
      [ -n "$(running_pid "$name")" ] || { tails; die "$name exited while starting (log above)"; }
    done
    [ $SECONDS -lt $deadline ] || { tails; die "only $alive of ${#workers[@]} workers registered with $master_url after ${timeout}s (logs above); \`scripts/cluster.sh stop\` cleans up"; }
    sleep 1
  done
  say "ready: $master_url with $alive workers (${worker_cores} core(s), $worker_memory each); status $status_url"
}

stop_one() {
  local name=$1 pid waited=0
  pid=$(running_pid "$name")
  if [ -z "$pid" ]; then
    rm -f "$(pid_file "$name")"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null && [ $waited -lt 150 ]; do sleep 0.1; waited=$((waited + 1)); done
  if kill -0 "$pid" 2>/dev/null; then
    say "$name (pid $pid) ignored TERM for 15s: KILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  # anything left in the daemon's own process group (a worker's executors)
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$(pid_file "$name")"
  say "stopped $name (pid $pid)"
}

stop() {
  local name stopped=0
  for name in "${workers[@]}" master; do
    [ -z "$(running_pid "$name")" ] || stopped=1
    stop_one "$name"
  done
  rm -f "$ports_file"
  [ $stopped = 1 ] || say "nothing running (state $state)"
}

status() {
  local name pid any=0
  for name in master "${workers[@]}"; do
    pid=$(running_pid "$name")
    if [ -n "$pid" ]; then say "$name: running (pid $pid)"; any=1; else say "$name: not running"; fi
  done
  [ $any = 1 ] || { say "not started: \`make cluster-start\` (or scripts/cluster.sh start)"; return 3; }
  local json
  json=$(master_json)
  [ -n "$json" ] || { say "the master does not answer on $status_url"; return 3; }
  "$python" - "$json" <<'EOF'
import json, sys
s = json.loads(sys.argv[1])
apps = s["activeapps"]
print(f"[cluster] {s['url']}: {s['status']}, {s['aliveworkers']} alive workers, "
      f"{s['cores']} cores ({s['coresused']} used), {len(apps)} running application(s)")
for app in apps:
    print(f"[cluster]   app {app['id']} {app['name']}: {app['cores']} cores, {app['state']}")
EOF
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) die "usage: scripts/cluster.sh start|stop|status" ;;
esac
