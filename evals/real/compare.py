"""Compare the engine's verdicts with the expert labels in labels.yaml.

Usage (from the project root):

    .venv/bin/python evals/real/compare.py [--logs DIR] [--labels FILE] [--json]

For each label it runs ``iodiag analyze LOG --format json`` and checks three things:

* io_matters: the engine's ``verdict.io_matters`` against the label (not scored where the label's
  ``io_matters`` is null);
* top cause: the engine's first ``verdict.causes`` code ("none" when it names none) must be the
  label's ``top_cause`` or one of its ``top_cause_any``;
* quiet: no finding whose code is in the label's ``quiet`` list may have severity warning or critical.

Exit status 0 when every scored check agrees, 1 otherwise.
"""

from __future__ import annotations

import argparse
import importlib.resources
import json
import subprocess
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LOUD = {"warning", "critical"}


def resolve(log: str, logs_dir: Path) -> Path:
    if log.startswith("wheel:"):
        return Path(str(importlib.resources.files("darshan"))) / log.removeprefix("wheel:")
    return logs_dir / log


def engine(path: Path) -> dict:
    exe = ROOT / ".venv" / "bin" / "iodiag"
    cmd = [str(exe) if exe.exists() else "iodiag", "analyze", str(path), "--format", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1) or not out.stdout.strip():
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}")
    return json.loads(out.stdout)


def compare(label: dict, report: dict) -> dict:
    verdict = report.get("verdict") or {}
    causes = verdict.get("causes") or []
    top = causes[0]["code"] if causes else "none"
    accepted = [label["top_cause"], *label.get("top_cause_any", [])]
    loud = sorted(
        {f["code"] for f in report.get("findings", []) if f["code"] in label.get("quiet", []) and f["severity"] in LOUD}
    )
    matters = verdict.get("io_matters")
    return {
        "log": label["log"],
        "label_io_matters": label["io_matters"],
        "engine_io_matters": matters,
        "io_matters_ok": None if label.get("io_matters") is None else bool(matters) == label["io_matters"],
        "label_top": accepted,
        "engine_top": top,
        "top_ok": top in accepted,
        "loud_quiet": loud,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=Path, default=ROOT.parent / "shared" / "logs")
    ap.add_argument("--labels", type=Path, default=HERE / "labels.yaml")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    labels = yaml.safe_load(args.labels.read_text())
    rows = []
    for label in labels:
        try:
            rows.append(compare(label, engine(resolve(label["log"], args.logs))))
        except Exception as exc:  # noqa: BLE001 - report and go on
            rows.append({"log": label["log"], "error": str(exc)})
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        for r in rows:
            if "error" in r:
                print(f"ERROR  {r['log']}: {r['error']}")
                continue
            bad = []
            if r["io_matters_ok"] is False:
                bad.append(f"io_matters engine={r['engine_io_matters']} label={r['label_io_matters']}")
            if not r["top_ok"]:
                bad.append(f"top engine={r['engine_top']} label={'/'.join(r['label_top'])}")
            if r["loud_quiet"]:
                bad.append(f"loud quiet codes {','.join(r['loud_quiet'])}")
            print(f"{'ok   ' if not bad else 'DIFF '} {r['log']}" + (": " + "; ".join(bad) if bad else ""))
        scored = [r for r in rows if "error" not in r]
        im = [r for r in scored if r["io_matters_ok"] is not None]
        print(
            f"\n{len(rows)} labels, {len(rows) - len(scored)} errors; io_matters agree "
            f"{sum(r['io_matters_ok'] for r in im)}/{len(im)}; top cause agree "
            f"{sum(r['top_ok'] for r in scored)}/{len(scored)}; logs with loud quiet codes "
            f"{sum(bool(r['loud_quiet']) for r in scored)}/{len(scored)}"
        )
    ok = all("error" not in r and r["io_matters_ok"] is not False and r["top_ok"] and not r["loud_quiet"] for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
