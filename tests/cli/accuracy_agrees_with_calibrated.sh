#!/usr/bin/env bash
# The accuracy line and the rows' `calibrated` column say the same of a prediction (one source:
# compute_constants_fitted): on the quickstart's job narrowed to one layout, per instance type and
# precision (the B200's FP8 and the V100's FP16 fractions fitted on calibration runs, their kernel
# efficiencies priors or defaults; the H100's BF16 all fitted; the A10G and the B300 derived;
# the Ascend 910B's FP16, priors beside a fitted fraction without a published run),
# every JSON row whose `calibrated` is false has an accuracy line that says "uncalibrated" and
# never "calibrated on", and every row whose `calibrated` is true one that says neither
# "uncalibrated" nor "not calibrated".
# Usage: accuracy_agrees_with_calibrated.sh CLUSTERSIM QUICKSTART_SCENARIO
set -u
cli="$1" quickstart="$2"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for case in "aws.p6-b200.48xlarge FP8 false" "aws.p3dn.24xlarge FP16 false" \
            "aws.p5.48xlarge BF16 true" "aws.g5.48xlarge BF16 false" \
            "aws.p6-b300.48xlarge FP8 false" \
            "huaweicloud.modelarts.bm.npu.arm.8snt9b2.d FP16 false"; do
  set -- $case
  scenario="$dir/$1-$2.textproto"
  sed -e "s/^  instance: .*/  instance: [\"$1\"]/" -e "s/precision: BF16/precision: $2/" \
    -e 's/nodes: \[.*\]/nodes: [2]/' -e 's/tensor_parallel: \[.*\]/tensor_parallel: [8]/' \
    -e 's/pipeline_parallel: \[.*\]/pipeline_parallel: [1]/' \
    -e 's/micro_batch_size: \[.*\]/micro_batch_size: [1]/' "$quickstart" >"$scenario"
  "$cli" run "$scenario" --limit 0 --format json >"$dir/rows.json" 2>"$dir/log" ||
    { echo "run $1 $2 failed:"; cat "$dir/log"; exit 1; }
  python3 - "$dir/rows.json" "$3" "$1 $2" <<'PY' || exit 1
import json, sys
rows = json.load(open(sys.argv[1]))
expected = sys.argv[2] == "true"
assert rows, sys.argv[3]
for r in rows:
    line = r["accuracy"].split(": ", 1)[1]
    assert r["calibrated"] == expected, (sys.argv[3], r["calibrated"])
    if r["calibrated"]:
        assert "uncalibrated" not in line and "not calibrated" not in line, (sys.argv[3], line)
    else:
        assert "uncalibrated" in line and not line.startswith("calibrated on"), (sys.argv[3], line)
print(sys.argv[3], "calibrated:", str(expected).lower(), "|", line)
PY
done
