# Sourced by the CLI test scripts that stop a sizing or sweep with SIGTERM while its journal grows.
# stop_midway OUT BYTES COMMAND ARGS...: runs clustersim COMMAND ARGS (which writes OUT) in the
# background and sends SIGTERM once OUT.partial holds more than BYTES; sets `stopped_rc` to its
# exit status. A small run takes a fraction of a second and on a loaded machine can finish between
# two polls: it is then started over (up to 10 tries), so that a race the command under test is
# not part of cannot fail the test. Output goes to "$dir/first".
stop_midway() {
  local out="$1" bytes="$2" pid
  shift 2
  for _ in $(seq 10); do
    rm -f "$out" "$out.partial"
    "$cli" "$@" >/dev/null 2>"$dir/first" &
    pid=$!
    for _ in $(seq 500); do
      [ -f "$out" ] && break
      [ -f "$out.partial" ] && [ "$(stat -c %s "$out.partial")" -gt "$bytes" ] && break
      sleep 0.01
    done
    kill -TERM "$pid" 2>/dev/null
    wait "$pid"
    stopped_rc=$?
    [ -f "$out" ] && [ "$stopped_rc" -eq 0 ] || return 0  # stopped, or failed: the caller checks
  done
}
