#!/usr/bin/env bash
# The README's pandas loader reads a sweep's HDF5 file as it is: runs the block the README marks
# "pandas-loader" on the quickstart's results and checks the count of p5 rows against the CSV of
# the same sweep, the column types (int64, float64, bool, str) and the typed attributes. Skipped
# (exit 77) where Debian's python3-h5py and python3-pandas are not installed.
# Usage: pandas_loader.sh CLUSTERSIM
set -u
cli="$1"
python=/usr/bin/python3
"$python" -c "import h5py, pandas" 2>/dev/null || { echo "no h5py/pandas: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$cli" sweep scenarios/quickstart.textproto --out "$dir/q.h5" >/dev/null 2>&1 &&
  "$cli" sweep scenarios/quickstart.textproto --out "$dir/q.csv" >/dev/null 2>&1 ||
  { echo "sweep failed"; exit 1; }
expected=$(awk -F, '$2 == "aws.p5.48xlarge"' "$dir/q.csv" | wc -l)
loader=$(awk '/<!-- pandas-loader/ { found = 1; next } found && /^```python/ { inside = 1; next }
              inside && /^```/ { exit } inside { print }' README.md)
[ -n "$loader" ] || { echo "README.md has no pandas-loader block"; exit 1; }
cat >"$dir/check.py" <<PY
${loader//quickstart.h5/$dir/q.h5}
import numpy as np
f = h5py.File("$dir/q.h5")
assert (df.instance == "aws.p5.48xlarge").sum() == $expected, (df.instance == "aws.p5.48xlarge").sum()
assert df.nodes.dtype == np.int64 and df.steps.dtype == np.int64, (df.nodes.dtype, df.steps.dtype)
assert df.step_s.dtype == np.float64 and df.calibrated.dtype == bool, df.dtypes
assert isinstance(df.instance[0], str) and isinstance(df.billing[0], str)
assert isinstance(f.attrs["rows"], np.int64) and f.attrs["rows"] == len(df), f.attrs["rows"]
assert f.attrs["complete"] == True and isinstance(f.attrs["scenario_name"], str)
print("%d of %d rows on aws.p5.48xlarge, as in the CSV" % ((df.instance == "aws.p5.48xlarge").sum(), len(df)))
PY
"$python" "$dir/check.py"
