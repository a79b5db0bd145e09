#!/usr/bin/env bash
# Runs a command and checks its exit code and that its whole output (stdout and stderr together)
# matches an extended regular expression, which may span lines ('.' matches a newline).
# Usage: expect.sh EXIT_CODE REGEX COMMAND [ARGS...]
expected_rc="$1"; pattern="$2"; shift 2
output="$("$@" 2>&1)"; rc=$?
if [ "$rc" -ne "$expected_rc" ]; then
  printf 'exit code %s, expected %s; output:\n%s\n' "$rc" "$expected_rc" "$output"; exit 1
fi
if ! [[ "$output" =~ $pattern ]]; then
  printf 'output does not match /%s/:\n%s\n' "$pattern" "$output"; exit 1
fi
