"""Benchmark: how fast a request far past the occurrence limit is refused (the issue's four examples).

Run: ``python benchmarks/refusal_benchmark.py``

Each call runs in a fresh interpreter (CPU time measured after ``import
calsim``) and must end in one ``InputError`` well under a second of CPU, with
no expansion started: ``FREQ=SECONDLY`` over a century, a SECONDLY
``COUNT=10**12`` on a one-day window 26 years after DTSTART, ``Every("1s")``
over ten years, and ``preview(n=99999999999)``. Baseline: expanding one day of
the same secondly rule (86,400 rows) in the same run. Prints one JSON object;
exits 1 when a target is missed.
Target: each refusal < 1 s of CPU.
"""

from __future__ import annotations

import json
import subprocess
import sys

CASES = {
    "secondly_over_100_years": "calsim.expand([calsim.Schedule('a','UTC','2000-01-01T00:00','FREQ=SECONDLY')],"
                               "'2000-01-01','2100-01-01')",
    "secondly_count_1e12_one_day": "calsim.expand([calsim.Schedule('a','UTC','2000-01-01T00:00',"
                                   "'FREQ=SECONDLY;COUNT=1000000000000')],'2026-01-01','2026-01-02')",
    "every_1s_over_10_years": "calsim.expand([calsim.Schedule('a','UTC','2026-01-01T00:00',calsim.Every('1s'))],"
                              "'2026-01-01','2036-01-01')",
    "preview_n_99999999999": "calsim.preview(calsim.Schedule('a','UTC','2026-01-01T00:00','FREQ=DAILY'), "
                             "n=99999999999)",
    "baseline_one_day_expanded": "calsim.expand([calsim.Schedule('a','UTC','2026-01-01T00:00','FREQ=SECONDLY')],"
                                 "'2026-01-01','2026-01-02')",
}
TARGET_CPU_S = 1.0


def measure(code: str) -> tuple[float, str]:
    prog = ("import calsim, time\nt = time.process_time()\ntry:\n    " + code + "\n    outcome = 'returned'\n"
            "except calsim.CalsimError as e:\n    outcome = type(e).__name__\n"
            "print(round(time.process_time() - t, 4), outcome)\n")
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), out[1]


def main() -> dict:
    results = {name: dict(zip(("cpu_s", "outcome"), measure(code))) for name, code in CASES.items()}
    refusals = {k: v for k, v in results.items() if not k.startswith("baseline")}
    ok = all(v["outcome"] == "InputError" and v["cpu_s"] < TARGET_CPU_S for v in refusals.values())
    out = {"results": results, "target_cpu_s": TARGET_CPU_S, "ok": ok}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    sys.exit(0 if main()["ok"] else 1)
