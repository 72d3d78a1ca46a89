#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Write what a dti binary prints for each of cases.py's CASES:

    make-expected.py [--out DIR] PATH-TO-DTI

into DIR (default: expected/ beside this script) as NAME.out, NAME.err
and NAME.rc (its exit status).  expected/ was written with the dti of
commit 56b1178, the last reader that knew record version 1 alone; to
check that it still holds what that dti prints, build it and compare
(README.md):

    make-expected.py --out /tmp/v1-check OLD/runtime/build/dti
    diff -r /tmp/v1-check runtime/tests/v1/expected
"""
import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from cases import CASES  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE / "expected")
    ap.add_argument("dti", type=Path)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, cmd in CASES.items():
        p = subprocess.run([args.dti.resolve(), *cmd], cwd=HERE, capture_output=True)
        (args.out / f"{name}.out").write_bytes(p.stdout)
        (args.out / f"{name}.err").write_bytes(p.stderr)
        (args.out / f"{name}.rc").write_text(f"{p.returncode}\n")
        print(f"{name}: exit {p.returncode}, {len(p.stdout)} bytes, {len(p.stderr)} on stderr")


if __name__ == "__main__":
    main()
