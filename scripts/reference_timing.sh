#!/usr/bin/env bash
# Times the reference's replay segment (../shared/reference/timing.md) on this machine and
# prints it beside `tb bench --json`, so the ratio is taken side by side, in one session.
#
#   scripts/reference_timing.sh                 # venv + reference timing + tb bench, ratios
#   TB_BENCH_JSON=bench.json scripts/reference_timing.sh   # reuse a saved `tb bench --json`
#
# The venv (target/py-ref-timing, or $TB_REF_TIMING_VENV) gets the reference's pinned
# dependencies ($TB_SHARED/tb-bench-v1/reference-python-requirements.txt). Nothing is installed
# from the checkouts: the framework ($TB_SHARED/thinkingbox) and the data repository's server
# package ($THINKINGBOX_DATA/servers/tb_business_ops_servers_202606) go on PYTHONPATH.
# The timed script is ours: scripts/reference_timing.py.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED="${TB_SHARED:-../shared}"
DATA="${THINKINGBOX_DATA:-$SHARED/thinkingbox-data}"
PINS="$SHARED/tb-bench-v1/reference-python-requirements.txt"
VENV="${TB_REF_TIMING_VENV:-target/py-ref-timing}"
PYTHON="${PYTHON:-python3}"
LIST="$DATA/releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml"
PASSES="${TB_REF_PASSES:-2}"

for f in "$PINS" "$LIST" "$SHARED/thinkingbox/thinkingbox" "$DATA/servers/tb_business_ops_servers_202606"; do
  [ -e "$f" ] || { echo "reference_timing: $f not found (set TB_SHARED / THINKINGBOX_DATA)" >&2; exit 1; }
done
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c 'import fastmcp, pydantic, odata_query, typesense, scipy, yaml' 2>/dev/null; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$PINS"
fi
export PYTHONPATH="$(cd "$SHARED/thinkingbox" && pwd):$(cd "$DATA/servers/tb_business_ops_servers_202606" && pwd)"
echo "reference_timing: timing the reference ($PASSES passes)..." >&2
REF="$("$VENV/bin/python" scripts/reference_timing.py "$DATA" "$LIST" "$PASSES")"

if [ -n "${TB_BENCH_JSON:-}" ]; then
  BENCH="$(cat "$TB_BENCH_JSON")"
else
  TB="${TB:-target/release/tb}"
  [ -x "$TB" ] || { echo "reference_timing: $TB not found (cargo build --release -p tb-cli, or set TB)" >&2; exit 1; }
  echo "reference_timing: tb bench --json..." >&2
  BENCH="$("$TB" bench --json --data "$DATA" --idle-sessions 0 --campaign-repeat 0 --latency-repeat 0 --mcp-calls 0)"
fi

SHARED="$SHARED" REF="$REF" BENCH="$BENCH" "$PYTHON" - <<'PY'
import json, os
ref = json.loads(os.environ["REF"])
bench = json.loads(os.environ["BENCH"])
traces = {}
tdir = os.path.join(os.environ["SHARED"], "tb-bench-v1", "traces")
if os.path.isdir(tdir):
    for f in sorted(os.listdir(tdir)):
        if f.endswith(".jsonl"):
            for line in open(os.path.join(tdir, f)):
                t = json.loads(line)
                traces[f"{t['id']}|{t['domain']}"] = t["golden_hash"]
    same = sum(1 for k, h in ref["golden_hashes"].items() if traces.get(k) == h)
    print(f"reference golden hashes equal to the recorded traces: {same}/{len(ref['golden_hashes'])}")
print(f"reference: Python {ref['python']}, imports {ref['import_s']:.2f} s, peak RSS {ref['peak_rss_mib']:.1f} MiB")
for i, r in enumerate(ref["runs"], 1):
    print(f"  run {i}: {r['tasks']} tasks, wall {r['wall_s']:.2f} s, sum {r['sum_s']:.2f} s, "
          f"median {r['median_ms']:.1f} ms, p95 {r['p95_ms']:.1f} ms, max {r['max_ms']:.1f} ms")
rows = [
    ("replay_all_s", ref["replay_all_s"], bench.get("replay_all_s"), "s"),
    ("per_task_ms_median", ref["per_task_ms_median"], bench.get("per_task_ms_median"), "ms"),
    ("load_s (reference: imports)", ref["import_s"], bench.get("load_s"), "s"),
    ("peak_rss_mib", ref["peak_rss_mib"], bench.get("replay_peak_rss_mib"), "MiB"),
]
print(f"{'figure':<30} {'reference':>12} {'tb':>12} {'ratio':>10}")
for name, r, t, unit in rows:
    ratio = f"{r / t:.1f}x" if t else "-"
    tv = f"{t:.4g} {unit}" if t is not None else "-"
    print(f"{name:<30} {r:>9.4g} {unit:<3}{tv:>12} {ratio:>10}")
print(json.dumps({"reference": {k: v for k, v in ref.items() if k != "golden_hashes"},
                  "golden_hashes": len(ref["golden_hashes"])}))
PY
