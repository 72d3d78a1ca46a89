# SPDX-License-Identifier: GPL-2.0
"""Version-1 data kept from before record version 2 (tests/v1/, see its
README.md) reads exactly as the reader of that time read it: the same
output, notices and exit status, byte for byte, for every input kept."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from test_cli import run

V1 = Path(__file__).resolve().parent / "v1"
sys.path.insert(0, str(V1))
from cases import CASES  # noqa: E402

# What tests/v1 holds besides inputs (formats: kept to read, no dti command reads it)
NOT_INPUTS = {"README.md", "cases.py", "make-expected.py", "capture-v1.py", "expected",
              "formats", "__pycache__"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_version_1_reads_as_it_did(name):
    p = run(CASES[name], work=V1)
    want = V1 / "expected"
    assert p.returncode == int((want / f"{name}.rc").read_text())
    assert p.stderr.decode() == (want / f"{name}.err").read_text()
    assert p.stdout == (want / f"{name}.out").read_bytes()


def test_every_input_is_read():
    """Each file or directory kept in tests/v1 is an argument of a case."""
    args = {a.split("/")[0] for cmd in CASES.values() for a in cmd}
    inputs = {p.name for p in V1.iterdir()} - NOT_INPUTS
    assert inputs and inputs <= args, sorted(inputs - args)
