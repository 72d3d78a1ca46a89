#!/usr/bin/env python3
"""Reference pages for DTI's tapset, as SystemTap makes its own.

    python3 tapset/man3stap.py OUTDIR tapset/dti.stp tapset/dti_control.stp

Writes OUTDIR/probe::NAME.3stap for every documented probe alias and
OUTDIR/function::NAME.3stap for every documented function, from the
comments SystemTap's tapset reference is written from: a block opening
with "/**", whose first line is "probe NAME - SUMMARY" or
"sfunction NAME - SUMMARY", then "@ARG: text" lines (continued on lines
indented further), then sections ("Description:", "Context:") to the
"*/".  A function's synopsis is the "function" line after its block.
A block that cannot be read this way is an error naming its file and
line; so is a probe alias or public function (no "private", no leading
"__") left without a page.
"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

TITLE = "DTI Tapset Reference"
HEAD = re.compile(r"(probe|sfunction)\s+(\S+)\s+-\s+(.+)")
ARG = re.compile(r"@(\w+):\s*(.*)")
SECTION = re.compile(r"([A-Z][A-Za-z ]*):\s*(.*)")
FUNCTION = re.compile(r"function\s+(\w+)\s*(:\s*\w+)?\s*\(([^)]*)\)")
ALIAS = re.compile(r"^probe\s+([\w.]+)\s*=", re.M)
PUBLIC = re.compile(r"^function\s+(\w+)", re.M)


class ManError(Exception):
    """A tapset comment that cannot be made into a page."""


@dataclass
class Entry:
    kind: str                   # "probe" or "function"
    name: str
    summary: str
    where: str                  # file:line of the block
    args: list[tuple[str, str]] = field(default_factory=list)
    sections: list[tuple[str, str]] = field(default_factory=list)
    synopsis: str = ""


def _lines_of(block: str) -> list[str]:
    out = []
    for line in block.splitlines():
        line = line.strip()
        if line.startswith("*"):
            line = line[1:]
            line = line[1:] if line.startswith(" ") else line
        out.append(line.rstrip())
    return out


def parse_block(block: str, where: str) -> Entry:
    lines = _lines_of(block)
    m = HEAD.fullmatch(lines[0].strip())
    if not m:
        raise ManError(f"{where}: the first line is not 'probe NAME - SUMMARY' "
                       f"or 'sfunction NAME - SUMMARY': {lines[0]!r}")
    entry = Entry("probe" if m[1] == "probe" else "function", m[2], m[3].strip(), where)
    current: list | None = None         # [name, text] being continued
    for line in lines[1:]:
        if not line.strip():
            current = None
            continue
        a = ARG.fullmatch(line)
        s = SECTION.fullmatch(line)
        if a and not line.startswith(" "):
            current = [a[1], a[2]]
            entry.args.append(current)
        elif s and not line.startswith(" ") and s[1] in ("Description", "Context", "Return",
                                                          "Returns"):
            current = [s[1], s[2]]
            entry.sections.append(current)
        elif current is not None:
            current[1] = f"{current[1]} {line.strip()}".strip()
        elif entry.sections:
            entry.sections[-1][1] += "\n\n" + line.strip()
            current = entry.sections[-1]
        else:
            raise ManError(f"{where}: text outside an @argument or a section: {line!r}")
    entry.args = [tuple(a) for a in entry.args]
    entry.sections = [tuple(s) for s in entry.sections]
    return entry


def entries(path: Path) -> list[Entry]:
    text = path.read_text()
    found = []
    for m in re.finditer(r"/\*\*(.*?)\*/", text, re.S):
        where = f"{path}:{text.count(chr(10), 0, m.start()) + 1}"
        e = parse_block(m[1].strip("\n"), where)
        if e.kind == "function":
            f = FUNCTION.search(text, m.end())
            if not f or f[1] != e.name:
                raise ManError(f"{where}: no 'function {e.name}' after the comment")
            ret = (f[2] or "").replace(" ", "")
            e.synopsis = f"{f[1]}{ret}({f[3].strip()})"
        else:
            e.synopsis = e.name
        found.append(e)
    return found


def undocumented(path: Path, documented: set[str]) -> list[str]:
    text = path.read_text()
    names = set(ALIAS.findall(text))
    names |= {n for n in PUBLIC.findall(text) if not n.startswith("__")}
    return sorted(names - documented)


def _esc(text: str) -> str:
    text = text.replace("\\", "\\e")
    return "\n".join(("\\&" + l if l[:1] in ".'" else l) for l in text.split("\n"))


def _inline(text: str) -> str:
    """@name references in italics, as SystemTap's pages show them."""
    return re.sub(r"@(\w+)", r"\\fI\1\\fR", _esc(text))


def page(e: Entry, date: str) -> str:
    title = f"{e.kind}::{e.name}"
    out = [f'.TH "{title.upper()}" "3stap" "{date}" "DTI" "{TITLE}"',
           ".SH NAME", f"{_esc(title)} \\- {_esc(e.summary)}",
           ".SH SYNOPSIS", ".sp", ".nf", f".B {_esc(e.synopsis)}", ".fi"]
    out.append(".SH VALUES" if e.kind == "probe" else ".SH ARGUMENTS")
    if not e.args:
        out += [".PP", "None"]
    for name, text in e.args:
        out += [".PP", f"\\fI{name}\\fR", ".RS 4", _inline(text), ".RE"]
    for name, text in e.sections:
        out.append(f".SH {name.upper()}")
        for para in text.split("\n\n"):
            out += [".PP", _inline(para)]
    out += [".SH SEE ALSO", ".BR stap (1),", ".BR dti\\-stap (1),",
            ".BR stapprobes (3stap),", ".BR stapfuncs (3stap)"]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    outdir = Path(argv[1])
    outdir.mkdir(parents=True, exist_ok=True)
    # Reproducible: SOURCE_DATE_EPOCH (Debian's builds set it), else the
    # newest of the tapset files.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    stamp = int(epoch) if epoch else max(int(Path(p).stat().st_mtime) for p in argv[2:])
    date = time.strftime("%Y-%m-%d", time.gmtime(stamp))
    try:
        for src in map(Path, argv[2:]):
            es = entries(src)
            missing = undocumented(src, {e.name for e in es})
            if missing:
                raise ManError(f"{src}: no reference comment for {', '.join(missing)}")
            for e in es:
                (outdir / f"{e.kind}::{e.name}.3stap").write_text(page(e, date))
    except (ManError, OSError) as e:
        print(f"man3stap: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
