"""Summaries, JSON, gnuplot chart and Markdown table of bench/run.py.

Every ratio is computed within one boot, from figures measured minutes
apart on the same guest; what is reported is its minimum, median and
maximum over the boots.  A case's figure in a boot is the mean over the
guest's CPUs of the per-CPU median time per call.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
from pathlib import Path

# (numerator, denominator, comparison, goal) of issue 17's goals.
GOALS = [
    ("dti_event64", "relay64", "<=", 1.3),
    ("dti_persist64", "relay64", "<=", 1.3),      # issue 21: the same goal
    ("dti_event64", "trace_event64", "<=", 1.0),
    ("dti_printk", "trace_array_printk", "<=", 1.0),
    ("dti_typed", "dti_printk", "<=", 1.0),        # issue 22: packing costs less
    ("dti_filtered", "empty_call", "<=", 1.0),
    ("tput:all", "tput:1", ">=", 1.8),
]
# Further ratios, no goal: the other payload sizes and other neighbours.
OTHER_RATIOS = [
    ("dti_persist64", "dti_event64"),
    ("dti_event16", "relay16"),
    ("dti_event256", "relay256"),
    ("dti_event16", "trace_event16"),
    ("dti_event256", "trace_event256"),
    ("dti_event64", "relay64_var"),
    ("relay64_var", "relay64"),
    ("dti_event64", "relay64_ts"),
    ("relay64_ts", "relay64"),
    ("clock_mono", "clock_local"),
    ("clock_mono", "relay64"),
    ("dti_reserve64", "relay64"),
    ("dti_reserve64", "dti_event64"),
    ("dti_printk", "printk"),
    ("trace_array_printk", "printk"),
    ("trace_event64", "relay64"),
    ("relay64", "empty_call"),
]
# Issue 44: LTTng beside DTI and ftrace, where the run could measure it.
LTTNG_GOALS = [("dti_event64", "lttng_event64", "<=", 1.0)]
LTTNG_RATIOS = [("trace_event64", "lttng_event64")]
# Issue 44: DTI's bytes per record over ftrace's, for each shape of the
# bytes boot (run.py's KEEP_SHAPES).
BYTES_GOAL = 1.0
BYTES_LABELS = {"u32x3": "bytes/record, 3 × u32 event: DTI / ftrace",
                "bin64": "bytes/record, 64-byte binary: DTI / ftrace"}


def _has_lttng(data: dict) -> bool:
    return "lttng_event64" in data["cases"]


def lttng_skipped(data: dict) -> str | None:
    """Why the run has no LTTng rows, or None if it has them."""
    if _has_lttng(data):
        return None
    return (data.get("lttng") or {}).get("skipped", "not measured by this run")


def _case_value(cpus: dict, key: str) -> float:
    return statistics.fmean(d[key] for d in cpus.values())


def _boot_value(b: dict, name: str) -> float:
    """A case's figure in one boot; "tput:N" is records/s with N writers."""
    if name.startswith("tput:"):
        t = b["tput"]
        n = max(t) if name == "tput:all" else int(name[5:])
        return t[n]["per_sec"]
    return _case_value(b["cases"][name], "median_ns")


def _spread(values: list[float]) -> dict:
    return {"min": min(values), "median": statistics.median(values),
            "max": max(values), "per_boot": values}


def _label(num: str, den: str, smp: int) -> str:
    if num.startswith("tput:"):
        return f"throughput {smp} writers / 1 writer"
    return f"{num} / {den}"


def _icount_ratio(data: dict, num: str, den: str) -> float | None:
    ic = (data.get("icount") or {}).get("cases")
    if not ic or num not in ic or den not in ic or not ic[den]["insns_median"]:
        return None
    return ic[num]["insns_median"] / ic[den]["insns_median"]


def _ratio(data: dict, num: str, den: str) -> dict:
    vals = [_boot_value(b, num) / _boot_value(b, den) for b in data["boots"]]
    return {"num": num, "den": den, **_spread(vals),
            "label": _label(num, den, data["args"]["smp"]),
            "insns_ratio": _icount_ratio(data, num, den)}


def _holds(r: dict, op: str, goal: float) -> str:
    ok = [(v <= goal) if op == "<=" else (v >= goal) for v in r["per_boot"]]
    if all(ok):
        return "yes"
    if not any(ok):
        return "no"
    return f"in {sum(ok)} of {len(ok)} boots"


def _cases(data: dict) -> dict:
    """Per case: medians over boots of the per-boot figures."""
    out = {}
    for case in data["cases"]:
        per_boot = [b["cases"][case] for b in data["boots"]]
        cpus = sorted(per_boot[0])
        out[case] = {
            "median_ns": statistics.median(_case_value(c, "median_ns") for c in per_boot),
            "p99_ns": statistics.median(_case_value(c, "p99_ns") for c in per_boot),
            "median_ns_min": min(_case_value(c, "median_ns") for c in per_boot),
            "median_ns_max": max(_case_value(c, "median_ns") for c in per_boot),
            "per_cpu_median_ns": {cpu: statistics.median(c[cpu]["median_ns"]
                                                         for c in per_boot)
                                  for cpu in cpus},
        }
    return out


def _probe(data: dict) -> dict | None:
    p = data.get("probe") or {}
    ph = p.get("phases")
    if not ph:
        return None
    val = {k: statistics.fmean(d["median_ns"] for d in v) for k, v in ph.items()}
    return {"median_ns": val, "attached_over_before": val["attached"] / val["before"],
            "after_over_before": val["after"] / val["before"],
            "probe_records": p.get("probe_records")}


def _tracepoint(data: dict) -> dict | None:
    """Issue 23's goal: dti:dti_record costs nothing measurable while off.
    Per case: the ns per call of every (boot, CPU) without the tracepoint
    ("absent"), with it off and with it on, as median [min, max]; off over
    absent (medians); whether the off and absent ranges overlap, i.e.
    whether any difference stays within the boots' noise; and guest
    instructions per call under -icount, which have no noise."""
    tp = data.get("tracepoint") or {}
    boots = tp.get("boots")
    if not boots or not boots["absent"]:
        return None
    out = {}
    for case in sorted({d["case"] for runs in boots["absent"] for d in runs}):
        v = {k: [d["median_ns"] for runs in boots[k] for d in runs if d["case"] == case]
             for k in ("absent", "off", "on")}
        med = {k: statistics.median(x) for k, x in v.items()}
        out[case] = {"median": med, "min": {k: min(x) for k, x in v.items()},
                     "max": {k: max(x) for k, x in v.items()},
                     "off_over_absent": med["off"] / med["absent"],
                     "on_over_off": med["on"] / med["off"],
                     "within_noise": (min(v["off"]) <= max(v["absent"])
                                      and min(v["absent"]) <= max(v["off"]))}
    ic = tp.get("icount") or {}
    insns = {}
    if (data.get("icount") or {}).get("cases") and (ic.get("absent") or {}).get("cases"):
        for case in out:
            insns[case] = {"absent": ic["absent"]["cases"][case]["insns_median"],
                           "off": data["icount"]["cases"][case]["insns_median"],
                           "on": ic["on"]["cases"][case]["insns_median"]}
    return {"cases": out, "pairs": len(boots["absent"]), "insns": insns}


def _bytes_goals(b: dict | None) -> list[dict]:
    """Issue 44's goals on the bytes boot: the ratio of the mean kept
    over its fills, and its range over the fills (each fill's DTI and
    ftrace rings stopped after the same records)."""
    out = []
    for shape, v in (b or {}).get("shapes", {}).items():
        per_fill = [f["ftrace_kept"] * b["dti_ring_bytes"] /
                    (f["dti_kept"] * f["ftrace_ring_bytes"]) for f in v["fills"]]
        out.append({"shape": shape, "label": BYTES_LABELS[shape], "op": "<=",
                    "goal": BYTES_GOAL, "ratio": v["ratio"], "fills": len(per_fill),
                    "min": min(per_fill), "max": max(per_fill),
                    "holds": "yes" if v["ratio"] <= BYTES_GOAL else "no"})
    return out


def summarise(data: dict) -> dict:
    goals = []
    lttng = _has_lttng(data)
    for num, den, op, goal in GOALS + (LTTNG_GOALS if lttng else []):
        r = _ratio(data, num, den)
        r.update(op=op, goal=goal, holds=_holds(r, op, goal))
        goals.append(r)
    tput = {n: {k: statistics.median(b["tput"][n][k] for b in data["boots"])
                for k in ("per_sec", "sum_per_sec")}
            for n in data["boots"][0]["tput"]}
    return {"goals": goals, "bytes_goals": _bytes_goals(data.get("bytes")),
            "other_ratios": [_ratio(data, n, d) for n, d in
                             OTHER_RATIOS + (LTTNG_RATIOS if lttng else [])],
            "cases": _cases(data), "tput_per_sec": tput, "probe": _probe(data),
            "tracepoint": _tracepoint(data)}


# ---------------------------------------------------------------- chart

GNUPLOT = """
set terminal pngcairo size 1200,1000 font "sans,9" noenhanced
set output '{png}'
set multiplot layout 2,1 title "DTI benchmark, {date}: {machine}"
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.6 border -1
set grid ytics
set xtics rotate by -35 scale 0
set key top right
set title "Time per call in the TCG guest: median over boots (bar) and p99 (whisker top); log scale"
set ylabel "ns per call"
set logscale y
plot '{cases}' using 2:2:3:xtic(1) title "median .. p99" lc rgb "#4472c4"
unset logscale y
set title "Goal ratios, min / median / max over {boots} boot(s); crosses are the goals; log scale"
set ylabel "ratio"
set logscale y
set yrange [0.1:*]
set style histogram errorbars gap 1 lw 1
plot '{ratios}' using 2:3:4:xtic(1) title "measured (median, min..max)" lc rgb "#ed7d31", \\
     '' using 0:5 with points pt 2 ps 2 lw 2 lc rgb "black" title "goal"
unset multiplot
"""


def chart(data: dict, png: Path, work: Path) -> bool:
    """Draw the PNG with gnuplot; False if gnuplot is missing or fails."""
    if not shutil.which("gnuplot"):
        return False
    s = data["summary"]
    cases = work / "chart-cases.dat"
    cases.write_text("".join(f'"{c}" {v["median_ns"]:.3f} {max(v["p99_ns"], v["median_ns"]):.3f}\n'
                             for c, v in s["cases"].items()))
    ratios = work / "chart-ratios.dat"
    ratios.write_text("".join(
        f'"{g["label"].replace(" / ", "/")}" {g["median"]:.4f} {g["min"]:.4f} '
        f'{g["max"]:.4f} {g["goal"]}\n' for g in s["goals"]))
    m = data["machine"]
    script = GNUPLOT.format(png=png, date=m["date"], boots=len(data["boots"]),
                            machine=f'{m["qemu"].split("(")[0].strip()} '
                                    f'{m["accel"].upper()}, guest {m["guest_kernel"]}, '
                                    f'{m["guest_smp"]} vCPUs',
                            cases=cases, ratios=ratios)
    (work / "chart.gp").write_text(script)
    r = subprocess.run(["gnuplot", str(work / "chart.gp")], capture_output=True, text=True)
    if r.returncode != 0:
        (work / "chart.err").write_text(r.stderr)
    return r.returncode == 0 and png.is_file()


# ---------------------------------------------------------------- table

def _f(v: float | None, digits: int = 2) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _ns(v: float) -> str:
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def _load(data: dict) -> str:
    loads = [v for b in data["boots"] for v in b.get("host_load", ())]
    return f"{min(loads):.1f} to {max(loads):.1f}" if loads else "?"


def _goal_rows(s: dict) -> list[str]:
    rows = ["| goal | measured ratio min / **median** / max | holds | "
            "instructions ratio (icount) |", "|---|---|---|---|"]
    for g in s["goals"]:
        rows.append(f'| {g["label"]} {g["op"].replace("<=", "≤").replace(">=", "≥")} '
                    f'{g["goal"]} | {_f(g["min"])} / **{_f(g["median"])}** / '
                    f'{_f(g["max"])} | {g["holds"]} | {_f(g["insns_ratio"])} |')
    for g in s.get("bytes_goals", ()):
        rows.append(f'| {g["label"]} ≤ {g["goal"]} | {_f(g["min"])} / **{g["ratio"]:.3f}** / '
                    f'{_f(g["max"])} (min, max: each of {g["fills"]} fills; bold: of their '
                    f'mean kept, see Bytes per record) | {g["holds"]} | – |')
    return rows


def _other_rows(s: dict) -> list[str]:
    rows = ["| ratio (no goal) | min / **median** / max | instructions ratio |",
            "|---|---|---|"]
    for r in s["other_ratios"]:
        rows.append(f'| {r["label"]} | {_f(r["min"])} / **{_f(r["median"])}** / '
                    f'{_f(r["max"])} | {_f(r["insns_ratio"])} |')
    return rows


def _loop_insns(loop: dict) -> str:
    if "folded_into" in loop:
        return f'{loop["insns"]} (folded into {loop["folded_into"]})'
    return str(loop.get("insns", "–"))


def _case_rows(data: dict) -> list[str]:
    s = data["summary"]
    ic = (data.get("icount") or {}).get("cases") or {}
    loops = data.get("static", {}).get("bench_loops", {})
    cpus = sorted(next(iter(s["cases"].values()))["per_cpu_median_ns"])
    head = ("| case | what is measured | median ns | p99 ns | "
            + " | ".join(f"cpu{c} ns" for c in cpus)
            + " | instructions/call (icount) | loop insns (static) |")
    rows = [head, "|" + "---|" * (6 + len(cpus))]
    for case, v in s["cases"].items():
        per_cpu = " | ".join(_ns(v["per_cpu_median_ns"][c]) for c in cpus)
        insns = ic.get(case, {}).get("insns_median")
        rows.append(f'| {case} | {data["cases"][case]} | {_ns(v["median_ns"])} | '
                    f'{_ns(v["p99_ns"])} | {per_cpu} | {_f(insns, 1)} | '
                    f'{_loop_insns(loops.get(case, {}))} |')
    return rows


def _decode_rows(d: dict) -> list[str]:
    rows = [f'{d["files"]} per-CPU files, {d["bytes"] / 1e6:.1f} MB in all, page cache '
            f'warm; best of {d["reps"]} run(s), output to /dev/null.  "of cat": cat\'s '
            'time over dti\'s, cat timed again beside each format (issue 18\'s goals).', "",
            "| reader | ms | MB/s | of cat | goal | holds |", "|---|---|---|---|---|---|",
            f'| cat | {d["cat"]["ms"]:.1f} | {d["cat"]["mb_per_s"]:.0f} | 1.00 | | |']
    for fmt, v in d["formats"].items():
        if "of_cat" not in v:           # a result file from before the goals
            continue
        rows.append(f'| dti decode -F {fmt} | {v["ms"]:.1f} | {v["mb_per_s"]:.0f} | '
                    f'{v["of_cat"]:.2f} | ≥ {v["goal"]} | {"yes" if v["holds"] else "no"} |')
    return rows


def _small_rows(d: dict) -> list[str]:
    """Issue 44: the same on small text records, per record."""
    rows = [f'{d["files"]} per-CPU files of {d["records"]:,} text records of the sample '
            f'driver\'s sizes ("req N: state A -> B"), {d["bytes"] / 1e6:.1f} MB in all, '
            f'as dti.ko wrote them; best of {d["reps"]} run(s), output to /dev/null.', "",
            "| reader | ms | records/s | ns/record | of cat | goal | holds |",
            "|---|---|---|---|---|---|---|",
            f'| cat | {d["cat"]["ms"]:.1f} | | | 1.00 | | |']
    for fmt, v in d["formats"].items():
        goal = d["goals"].get(fmt)
        rows.append(f'| dti decode -F {fmt} | {v["ms"]:.1f} | {v["records_per_s"]:,.0f} | '
                    f'{v["ns_per_record"]:.0f} | {v["of_cat"]:.2f} | '
                    f'{"≥ " + str(goal) if goal else ""} | '
                    f'{("yes" if v["of_cat"] >= goal else "no") if goal else ""} |')
    return rows


def _dump_rows(d: dict) -> list[str]:
    return [f'A {d["bytes"] / 2**20:.0f} MiB ELF dump of a crashed guest (QEMU '
            f'dump-guest-memory), page cache warm; best of {d["reps"]} run(s), output to '
            '/dev/null.  "of cat": cat\'s time over dti\'s (issue 19\'s goal).', "",
            "| reader | ms | MB/s | of cat | goal | holds |", "|---|---|---|---|---|---|",
            f'| cat | {d["cat_ms"]:.1f} | {d["cat_mb_per_s"]:.0f} | 1.00 | | |',
            f'| dti dump | {d["ms"]:.1f} | {d["mb_per_s"]:.0f} | {d["of_cat"]:.2f} | '
            f'≥ {d["goal"]} | {"yes" if d["holds"] else "no"} |']


def _static_rows(st: dict) -> list[str]:
    rows = [st["method"] + ".", "",
            "| dti.ko function | instructions | static-key sites | calls and tail calls |",
            "|---|---|---|---|"]
    for f, v in st["dti_path"].items():
        rows.append(f'| {f} | {v["insns"]} | {v["static_keys"]} | '
                    f'{", ".join(v["calls"]) or "–"} |')
    rows.append(f'| **total** | **{st["dti_path_insns"]}** | | |')
    if "dti_path_without_tracepoint" in st:
        without = st["dti_path_without_tracepoint"]
        keys = sum(v["static_keys"] for v in st["dti_path"].values())
        keys_without = sum(v["static_keys"] for v in without.values())
        rows += ["", f'Built without dti:dti_record: {st["dti_path_insns_without_tracepoint"]} '
                     f'instructions and {keys_without} static-key sites on the same path '
                     f'(with it: {st["dti_path_insns"]} and {keys}).']
    stubs = st["probe_stub_calls_on_path"]
    rows += ["", "Call sites of dti_probe_* stubs in these functions (a call "
                 "site is executed whether or not a probe is attached unless a "
                 "static key guards it; dti_probe_lost is on the loss paths): "
                 + (", ".join(stubs) or "none") + ".",
             "__fentry__ (ftrace's entry hook, a NOP while unused) is left out; "
             "pv_ops calls are the paravirt interrupt flag operations, patched "
             "into single instructions at boot."]
    return rows


def _bytes_rows(b: dict) -> list[str]:
    """Issue 44's history per MiB: what DTI and ftrace keep of the same records."""
    page = b["ftrace_page"]["offset"] + b["ftrace_page"]["size"]
    ft = {(v["ftrace_ring_bytes"], v["ftrace_buffer_size_kb"]) for v in b["shapes"].values()}
    rows = [f'Rings of {b["kb"]} KiB per CPU each (DTI: {b["kb"] // 16} sub-buffers of 16 KiB; '
            'ftrace: ' + ", ".join(f'{n // page} pages of {page} bytes (buffer_size_kb {kb}, '
                                   'their data bytes)' for n, kb in sorted(ft))
            + ", and the spare page it keeps for a reader, which holds none of the "
            "records kept, not counted), filled on one CPU with the same records, "
            f'several times what fits, {b["stops"]} times for each record, the fills '
            "stopping at different points of the last sub-buffer or page.  Kept: DTI's stats "
            "(written less overwritten), ftrace's per-CPU \"entries\", each checked "
            "against the records its reader shows (the lines of the channel's merged "
            "view, of the instance's per-CPU trace file); mean [min, max] over the fills.  "
            "Bytes per record: the ring over the mean kept, so sub-buffer headers and "
            "event formats (DTI), page headers (ftrace) and the unwritten part of the "
            "last sub-buffer or page count too.  \"Layout\": one record's bytes by each "
            "format (DTI record version 2, records from one call site).", "",
            "| record | DTI kept | ftrace kept | DTI bytes/record | ftrace bytes/record | "
            "DTI / ftrace (goal ≤ 1) | holds | layout DTI / ftrace |",
            "|---|---|---|---|---|---|---|---|"]
    for v in b["shapes"].values():
        kept = {k: f'{v[k]["mean"]:,.0f} [{v[k]["min"]:,}, {v[k]["max"]:,}]'
                for k in ("dti_kept", "ftrace_kept")}
        rows.append(f'| {v["what"]} | {kept["dti_kept"]} | {kept["ftrace_kept"]} | '
                    f'{v["dti_bytes"]:.1f} | {v["ftrace_bytes"]:.1f} | '
                    f'{v["ratio"]:.3f} | {"yes" if v["ratio"] <= 1 else "no"} | '
                    f'{v["layout"]["dti"]} / {v["layout"]["ftrace"]} |')
    return rows


def _lttng_rows(data: dict) -> list[str]:
    why = lttng_skipped(data)
    if why:
        return [f"**LTTng rows skipped**: {why}".replace("\n", "  \n")]
    lt = data["lttng"]
    per_record = [d["lttng_bytes_per_record"] for b in data["boots"]
                  for d in b["cases"]["lttng_event64"].values()]
    return [f'lttng-modules {lt["version"]} (source {lt["source"]}), built for the '
            'guest kernel; a kernel session made by bench/lttng/lttng_flight through '
            "lttng-modules' ioctls, one channel in overwrite (flight-recorder) mode of "
            "8 × 128 KiB per CPU, DTI's geometry, no consumer; the event "
            "dti_bench_payload64 of the probe module dti_bench_lttng.ko, the payload "
            "as ctf_array(u8, 64).  While lttng_event64 runs, dti_bench.ko disables "
            "the event in its ftrace instance, so LTTng's probe is alone on the "
            "tracepoint (the instance is checked to have recorded nothing).  Every "
            "run is checked: LTTng reported no buffer that lost records, and the "
            f'run\'s CPU\'s buffer moved by at least {lt["record_min_bytes"]} bytes per record '
            "(compact header and payload); it moved by "
            f"{statistics.median(per_record):.2f} bytes per record (median over boots "
            "and CPUs: records, packet headers and sub-buffer padding)."]


def markdown(data: dict, paths: dict | None = None) -> str:
    s, m, a = data["summary"], data["machine"], data["args"]
    out = [f'## DTI benchmark, {m["date"]}', "",
           f'Host {m["host_cpu"]} ({m["host_cores"]} cores, Linux {m["host_kernel"]}); '
           f'guest {m["guest_kernel"]} under {m["qemu"]} ({m["accel"].upper()}), '
           f'{m["guest_smp"]} vCPUs.  {len(data["boots"])} boot(s); per boot every case '
           f'ran on every CPU: {a["batches"]} batches × {a["calls"]} calls, each batch '
           f'timed with local_clock(), interrupts on.  Guest clocksource: '
           f'{m.get("clocksource", "?")} (kernel command line: '
           f'"{m.get("guest_append", "")}"; see DEFAULT_APPEND in bench/run.py).  '
           f'Host load average (1 min) around the boots: {_load(data)}.', "",
           "Ratios compare two cases' median ns per call in the same boot "
           "(mean over CPUs); min / median / max are over the boots.  "
           "'instructions ratio' is the same ratio in guest instructions "
           "executed per call, counted under QEMU -icount shift=0 (one CPU, "
           "one boot).", "",
           "### Goals (issue 17)", "", *_goal_rows(s), "",
           *(["**LTTng rows skipped**: see LTTng below.", ""] if lttng_skipped(data)
             else []),
           "### Other ratios", "", *_other_rows(s), "",
           "### Time per call", "",
           "Absolute ns are TCG time on this host: compare them only within this "
           "table.  'instructions/call': guest instructions executed per call "
           "including the benchmark loop (QEMU counts each iteration of a rep "
           "movs/stos as an instruction).  'loop insns (static)': instructions "
           "in the case's batch function in dti_bench.ko (objdump), callees "
           "not included.", "", *_case_rows(data), ""]
    t = s["tput_per_sec"]
    out += ["### Throughput (dti_event 64 B)", "",
            "Writers on different CPUs start together once each has done an "
            "untimed warm-up batch.  records/s: all records over the time from "
            "the first writer's start to the last one's end (the goal's "
            "figure); sum of writers' rates: each writer's records over its own "
            "time.  Medians over boots.", "",
            "| writers | records/s | sum of writers' rates |", "|---|---|---|",
            *[f'| {n} | {v["per_sec"]:,.0f} | {v["sum_per_sec"]:,.0f} |'
              for n, v in sorted(t.items())], ""]
    out += ["### LTTng (issue 44)", "", *_lttng_rows(data), ""]
    if data.get("bytes"):
        out += ["### Bytes per record (issue 44)", "", *_bytes_rows(data["bytes"]), ""]
    p = s.get("probe")
    out += ["### Probe effect (dti_event 64 B, one boot)", ""]
    if p:
        ns = p["median_ns"]
        out += [f'A SystemTap `probe dti.record {{ n++ }}` attached: '
                f'{_ns(ns["before"])} ns before, {_ns(ns["attached"])} ns attached '
                f'(× {p["attached_over_before"]:.2f}), {_ns(ns["after"])} ns after '
                f'detaching (× {p["after_over_before"]:.2f}); the probe counted '
                f'{p["probe_records"]} records.', ""]
    else:
        out += [f'skipped: {(data.get("probe") or {}).get("skipped", "?")}', ""]
    tp = s.get("tracepoint")
    if tp:
        out += ["### dti:dti_record off and on (issue 23)", "",
                f'{tp["pairs"]} pair(s) of boots: dti.ko built without the tracepoint '
                '(DTI_NO_TRACEPOINT=y), then the usual dti.ko with the event off and, '
                'in the same boot, enabled in ftrace.  Figures: ns per call, median '
                '[min, max] over boots and CPUs; relay64 does not involve DTI and shows '
                'the boots\' own noise.  "Within noise": the off and absent ranges '
                "overlap.", "",
                "| case | absent | off | on | off / absent | within noise | on / off |",
                "|---|---|---|---|---|---|---|"]
        for case, v in tp["cases"].items():
            cell = {k: f'{v["median"][k]:.0f} [{v["min"][k]:.0f}, {v["max"][k]:.0f}]'
                    for k in ("absent", "off", "on")}
            out.append(f'| {case} | {cell["absent"]} | {cell["off"]} | {cell["on"]} | '
                       f'{v["off_over_absent"]:.3f} | {"yes" if v["within_noise"] else "no"} | '
                       f'{v["on_over_off"]:.2f} |')
        out.append("")
        if tp["insns"]:
            out += ["Guest instructions per call under QEMU -icount shift=0 (one boot "
                    "each, CPU 0, the benchmark loop included):", "",
                    "| case | absent | off | on | off − absent |", "|---|---|---|---|---|",
                    *[f'| {c} | {v["absent"]:.1f} | {v["off"]:.1f} | {v["on"]:.1f} | '
                      f'{v["off"] - v["absent"]:+.1f} |' for c, v in tp["insns"].items()],
                    ""]
    if data.get("decode"):
        out += ["### Host: dti decode against cat of the same files", "",
                *_decode_rows(data["decode"]), ""]
    if data.get("decode_small"):
        out += ["### Host: dti decode of small text records (issue 44)", "",
                *_small_rows(data["decode_small"]), ""]
    if data.get("dump"):
        out += ["### Host: dti dump against cat of the same vmcore", "",
                *_dump_rows(data["dump"]), ""]
    if data.get("static"):
        out += ["### Static count of dti_event's path in dti.ko", "",
                *_static_rows(data["static"]), ""]
    if paths:
        out += [f'JSON: {paths["json"]}  ', f'Chart: {paths.get("png") or "not drawn"}']
    return "\n".join(out)


def write_all(data: dict, outdir: Path, stamp: str) -> dict:
    """bench-STAMP.json/.png/.md in outdir, copied to latest.*."""
    work = outdir / f"bench-{stamp}"
    paths = {"json": outdir / f"bench-{stamp}.json", "png": outdir / f"bench-{stamp}.png",
             "md": outdir / f"bench-{stamp}.md"}
    if not chart(data, paths["png"], work):
        paths["png"] = None
    data["outputs"] = {k: str(v) if v else None for k, v in paths.items()}
    paths["json"].write_text(json.dumps(data, indent=1, default=str) + "\n")
    paths["md"].write_text(markdown(data, paths) + "\n")
    for k, p in paths.items():
        if p:
            shutil.copyfile(p, outdir / f"latest{p.suffix}")
    return paths
