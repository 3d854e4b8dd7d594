"""Times the reference's replay segment in-process (our own script; see reference_timing.sh).

Per task, for each server of its merged world_state: a fresh SandboxToolsSystem of that
server's module (loads and validates its initial data), the task's data_patch, the initial
stable state, the golden tool calls, the golden hash, the golden stable state, and the deep
diff initial vs golden. Importing the five server modules is timed once, apart.
Prints one JSON object.
"""

import asyncio
import importlib
import json
import logging
import resource
import statistics
import sys
import time
from pathlib import Path

import yaml

PKG = "tb_business_ops_servers_202606"


def percentile(v, p):
    s = sorted(v)
    return s[max(0, min(len(s) - 1, int(-(-p * len(s) // 1)) - 1))]


def main():
    data = Path(sys.argv[1])
    test_list = Path(sys.argv[2])
    passes = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    logging.disable(logging.CRITICAL)
    from thinkingbox.common.config_types import merge_init_config
    from thinkingbox.common.hydrator import iter_cases_by_names

    names = yaml.safe_load(test_list.read_text())
    cases = list(iter_cases_by_names(names, base_dir=data / "dataset", agent="think"))
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    db_utils = importlib.import_module(f"{PKG}.utils.db_utils")
    modules = {}
    for tc in cases:
        ws = merge_init_config(tc.scenario.world_state, tc.init)
        for server in ws:
            if server not in modules:
                modules[server] = importlib.import_module(f"{PKG}.mcp_{server}")
    import_s = time.perf_counter() - t0

    async def segment(ws):
        hashes = {}
        for server, cfg in ws.items():
            mod = modules[server]
            mod.sandbox_system = None
            system = mod.initialize_sandbox_system()
            patch = cfg.get("data_patch")
            if patch:
                system.apply_data_patch(patch)
            initial = db_utils.get_stable_database_state(system.db)
            golden_db = await db_utils.apply_golden_set_to_database(
                system, cfg.get("golden_test_case") or {}
            )
            hashes[server] = db_utils.calculate_database_hash(golden_db)
            golden = db_utils.get_stable_database_state(golden_db)
            db_utils.calculate_deep_diff(initial, golden)
        return hashes

    runs = []
    loop = asyncio.new_event_loop()
    for _ in range(passes):
        per_task = []
        hashes = {}
        w0 = time.perf_counter()
        for tc in cases:
            ws = merge_init_config(tc.scenario.world_state, tc.init)
            s0 = time.perf_counter()
            h = loop.run_until_complete(segment(ws))
            per_task.append(time.perf_counter() - s0)
            for server, v in h.items():
                hashes[(tc.uid, server)] = v
        wall = time.perf_counter() - w0
        runs.append(
            {
                "tasks": len(per_task),
                "wall_s": wall,
                "sum_s": sum(per_task),
                "median_ms": statistics.median(per_task) * 1e3,
                "p95_ms": percentile(per_task, 0.95) * 1e3,
                "max_ms": max(per_task) * 1e3,
            }
        )
    out = {
        "python": sys.version.split()[0],
        "import_s": import_s,
        "runs": runs,
        "replay_all_s": min(r["wall_s"] for r in runs),
        "per_task_ms_median": min(r["median_ms"] for r in runs),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "rss_before_imports_mib": rss0 / 1024.0,
        "golden_hashes": {f"{u}|{s}": h for (u, s), h in sorted(hashes.items())},
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
