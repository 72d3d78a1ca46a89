#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Write expected/ from a dti binary: make-expected.py PATH-TO-DTI.

Run once, with the dti of commit 56b1178 (the last reader that knew
record version 1 alone), to keep what it printed; see cases.py.
"""
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from cases import CASES  # noqa: E402


def main() -> None:
    dti = sys.argv[1]
    out = HERE / "expected"
    out.mkdir(exist_ok=True)
    for name, args in CASES.items():
        p = subprocess.run([dti, *args], cwd=HERE, capture_output=True)
        (out / f"{name}.out").write_bytes(p.stdout)
        (out / f"{name}.err").write_bytes(p.stderr)
        (out / f"{name}.rc").write_text(f"{p.returncode}\n")
        print(f"{name}: exit {p.returncode}, {len(p.stdout)} bytes")


if __name__ == "__main__":
    main()
