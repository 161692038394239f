"""The importer against published figures: `python validation/machine-import/check.py [DATA_DIR]`.

For every README median of nviennot/core-to-core-latency carried in nviennot_readme_medians.csv,
imports that CPU's matrix with `semsim machine import` defaults (no flags beyond --format) and
finds the model's latency class (smt, same_die, same_socket, one_hop, two_hops: the median of the
matrix pairs the inferred topology puts in it) nearest to the published median. A figure counts
as reproduced when that class is within 10 %: the published medians were taken over the same
matrices, so a miss means the inferred topology grouped the pairs differently. For the two mctop
machines, mctop_figures.csv gives the latency levels, the classes must equal them exactly.
DATA_DIR defaults to ../shared/reference/data beside the repository.
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOLERANCE = 0.10


def default_data_dir() -> Path:
    return HERE.parents[2] / "shared" / "reference" / "data"


def _rows(name: str) -> list[dict[str, str]]:
    with open(HERE / name, encoding="utf-8") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def nviennot_rows(data_dir: Path) -> list[dict[str, object]]:
    from semsim import machine_import as mi

    models: dict[str, dict] = {}
    out = []
    for row in _rows("nviennot_readme_medians.csv"):
        path = data_dir / "c2c_nviennot" / row["file"]
        if row["file"] not in models:
            models[row["file"]] = mi.import_matrix(path, "nviennot")
        classes = {k: v["value"] for k, v in models[row["file"]]["latency_ns"].items()}
        for published in (float(x) for x in re.findall(r"(\d+(?:\.\d+)?)ns", row["median_latency_as_written"].split("(")[0])):
            cls, value = min(classes.items(), key=lambda kv: abs(kv[1] / published - 1))
            out.append({"table": row["table"], "cpu": row["cpu"], "published_ns": published, "class": cls,
                        "model_ns": value, "error": value / published - 1,
                        "ok": abs(value / published - 1) <= TOLERANCE})
    return out


def mctop_rows(data_dir: Path) -> list[dict[str, object]]:
    from semsim import machine_import as mi

    out = []
    for row in _rows("mctop_figures.csv"):
        if row["figure"] != "c2c_latency_level_cycles":
            continue
        measured = mi.read_mctop(data_dir / "mctop" / row["file"])
        levels = [lo for lo, _ in mi.latency_classes(
            [v for i, r in enumerate(measured.matrix) for j, v in enumerate(r) if i != j], 0.0)]
        out.append({"file": row["file"], "published": float(row["value"]), "found": float(row["value"]) in levels})
    return out


def main(argv: list[str]) -> int:
    data_dir = Path(argv[1]) if len(argv) > 1 else default_data_dir()
    rows = nviennot_rows(data_dir)
    print("| table | CPU | published ns | nearest model class | model ns | error |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        mark = "" if r["ok"] else " **miss**"
        print(f"| {r['table']} | {r['cpu']} | {r['published_ns']:g} | {r['class']} | {r['model_ns']:g} | "
              f"{100 * r['error']:+.1f} %{mark} |")
    ok = sum(1 for r in rows if r["ok"])
    errs = sorted(abs(r["error"]) for r in rows)
    print(f"\n{ok} of {len(rows)} published medians within {TOLERANCE:.0%}; median |error| "
          f"{100 * errs[len(errs) // 2]:.1f} %")
    mc = mctop_rows(data_dir)
    print(f"mctop latency levels found in the matrices: {sum(r['found'] for r in mc)} of {len(mc)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
