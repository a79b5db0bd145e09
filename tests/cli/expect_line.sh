# Sourced by the CLI test scripts that run "$cli" with scratch files in "$dir".
# expect EXIT MESSAGE COMMAND ARGS...: clustersim COMMAND ARGS exits EXIT with MESSAGE (a fixed
# string) as a whole line of its output (stdout and stderr together).
expect() {
  local code="$1" message="$2"
  shift 2
  "$cli" "$@" >"$dir/log" 2>&1
  local rc=$?
  if [ "$rc" -ne "$code" ] || ! grep -qxF -- "$message" "$dir/log"; then
    echo "$*: exit $rc (expected $code), output:"; cat "$dir/log"
    echo "expected: $message"; exit 1
  fi
}
