#!/usr/bin/env bash
# Runs the libFuzzer target over a corpus made from the shipped files: every scenario ('S'), each
# catalog file on its own and the GPU, AWS instance and Llama model files together ('C'), every
# price file ('P'), every trace file of the tests ('T'). Deterministic: a fixed seed and a fixed number of inputs, one process.
# Usage: run_fuzzer.sh FUZZER RUNS SEED [ARTIFACT_DIR [CORPUS_DIR]]   (from the project root)
# A crash leaves its input in ARTIFACT_DIR (default: a temporary folder, printed) as crash-*.
# CORPUS_DIR (default: a temporary folder, removed) keeps the corpus, and what the run adds to
# it, for a longer campaign to continue from.
set -u
fuzzer="$1" runs="$2" seed="$3"
artifacts="${4:-$(mktemp -d)}"
mkdir -p "$artifacts"
if [ -n "${5:-}" ]; then
  corpus="$5"
  mkdir -p "$corpus"
else
  corpus=$(mktemp -d)
  trap 'rm -rf "$corpus"' EXIT
fi
n=0
add() {  # KIND FILE...
  local kind="$1"; shift
  n=$((n + 1))
  { printf '%s' "$kind"; cat "$@"; } >"$corpus/seed-$n"
}
for f in scenarios/*.textproto scenarios/*/*.textproto tests/data/*.textproto \
         tests/data/serve/*.textproto tests/fuzz/priced.textproto; do
  add S "$f"
done
for f in models/*.textproto topologies/*.textproto; do add C "$f"; done
add C topologies/gpus.textproto topologies/instances_aws.textproto models/llama2.textproto
for f in scenarios/prices/*.textproto $(find tests/data -path '*price*' -name '*.textproto'); do
  add P "$f"
done
for f in tests/fuzz/trace.csv tests/data/serve/*trace*.csv; do add T "$f"; done
echo "corpus: $n seeds; $runs inputs from seed $seed; artifacts in $artifacts"
"$fuzzer" "$corpus" -seed="$seed" -runs="$runs" -max_len=65536 -timeout=20 -rss_limit_mb=2048 \
  -artifact_prefix="$artifacts/" -print_final_stats=1 2>&1 | tail -n 25
status=${PIPESTATUS[0]}
ls "$artifacts"/crash-* "$artifacts"/timeout-* "$artifacts"/leak-* 2>/dev/null && exit 1
exit "$status"
