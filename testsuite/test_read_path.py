"""The trace files' read path (issue 52): reads of every size, records of
every size, in both modes, in a real guest kernel.

A read() of traceN gives whole units: a sub-buffer's header, or a
continuation header with the record after it, then whole records; one too
small for its first unit fails with EINVAL and takes nothing
(docs/debugfs.md).  These tests read with every size from 1 byte to a
sub-buffer, from the start of sub-buffers and from their middle, at the
end of closed and current ones, and records from 1 byte to the largest
payload, by cat (coreutils', as users have it), dd and readsizes
(helpers/readsizes.c).  The guests boot with slub_debug=FZ, so a write
past a slab object (the old bounce buffer's overflow on a short read) is
a splat that fails the test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dtirec import SUBBUF_HEADER_SIZE, json_record, parse_merged_ts, parse_stream, payload_for
from guestlib import PRELUDE
from harness import userland

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
READSIZES_SRC = HERE / "helpers" / "readsizes.c"
SLUB = "slub_debug=FZ"
NO_OVERWRITE = 1            # DTI_F_NO_OVERWRITE
MODES = {"over": 0, "nover": NO_OVERWRITE}
CREC_HDR_MAX = 40           # DTI_CREC_HDR_MAX
# coreutils' cat, which reads 128 KiB at a time (busybox's reads less)
GCAT = "/bin/gcat"


@pytest.fixture(scope="session")
def readsizes(build_dir, kernel) -> Path:
    """helpers/readsizes.c, static for the guest's architecture, rebuilt when stale."""
    header = REPO / "kmod" / "include" / "uapi" / "linux" / "dti_record.h"
    try:
        return userland.static_helper(READSIZES_SRC, build_dir / "helpers", kernel.arch,
                                      include=header.parent.parent, deps=(header,))
    except userland.UserlandError as e:
        pytest.fail(str(e), pytrace=False)


def out(res, *parts) -> str:
    return res.outdir.joinpath(*parts).read_text()


def raw(res, *parts) -> bytes:
    return res.outdir.joinpath(*parts).read_bytes()


def max_payload(subbuf: int) -> int:
    """dti_max_payload() of a channel without event types."""
    return subbuf - SUBBUF_HEADER_SIZE - CREC_HDR_MAX


# The sweep's ring, on CPU 0 of a 4096-byte x 4 channel: text records,
# binary ones, one of the largest payload (a sub-buffer to itself), and a
# current sub-buffer holding records.
SWEEP_SUBBUF = 4096
SWEEP_WRITES = [("printk", 30, "a"), ("event", 3, 1000), ("event", 1, max_payload(4096)),
                ("printk", 40, "b"), ("event", 2, 500), ("printk", 20, "c")]
# Streams kept whole for the host to decode: sizes around the header and
# the records, and a few others.
SWEEP_KEEP = [1, 50, 119, 120, 121, 135, 136, 137, 143, 144, 200, 997, 1000,
              2048, 4067, 4068, 4095, 4096]


def write_cmds(name: str, writes) -> str:
    cmds = []
    for kind, count, arg in writes:
        cmds.append(f"ctl {kind} {name} 3 {count} 0 process {arg}")
    return "\n".join(cmds) + "\n"


def expected(writes) -> list[tuple[bool, bytes]]:
    """(is text, payload) of each record the writes store, in order."""
    recs = []
    for kind, count, arg in writes:
        for i in range(count):
            recs.append((True, f"{arg} {i}\n".encode()) if kind == "printk"
                        else (False, payload_for(i, arg)))
    return recs


def as_expected(recs) -> list[tuple[bool, bytes]]:
    return [(r.is_text, r.payload) for r in recs]


@pytest.mark.parametrize("mode", MODES)
def test_reads_of_every_size(dti_guest, dti_tool, readsizes, mode):
    # Every read size from 1 byte to the sub-buffer's, from the start of
    # the file and, in turn with reads of 997 bytes, from the middle of
    # sub-buffers: every read() starts with a header, gives at least one,
    # and what all of them give less their continuation headers is what
    # reads of a sub-buffer give.  The kept streams decode to the records
    # written, and dti decode of them to the merged view's.
    ch = f"rs{mode}"
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    dti_guest.extra_files[str(readsizes)] = "/bin/readsizes"
    keep = " ".join(map(str, SWEEP_KEEP))
    res = dti_guest.run(PRELUDE + f"""
        ctl register_sub {ch} {SWEEP_SUBBUF} 4 7 {MODES[mode]}
        {write_cmds(ch, SWEEP_WRITES)}
        cat $D/{ch}/merged-ts > /out/merged-ts
        mkdir -p /out/start /out/middle
        readsizes $D/{ch}/trace0 $D/{ch}/reset_consumed {SWEEP_SUBBUF} 1 {SWEEP_SUBBUF} 0 \\
            /out/start {keep} > /out/start.txt
        readsizes $D/{ch}/trace0 $D/{ch}/reset_consumed {SWEEP_SUBBUF} 1 {SWEEP_SUBBUF} 997 \\
            /out/middle {keep} > /out/middle.txt
        for f in /out/start/* /out/middle/*; do
            dti decode -F json $f > $f.json 2> $f.err
        done
    """, smp=2, append=SLUB, timeout=900).check()
    want = expected(SWEEP_WRITES)
    merged = parse_merged_ts(out(res, "merged-ts"))
    assert len(merged) == len(want)
    for kind in ("start", "middle"):
        lines = out(res, f"{kind}.txt").splitlines()
        assert len(lines) == SWEEP_SUBBUF, kind
        bad = [ln for ln in lines if not ln.endswith(" ok")]
        assert bad == [], f"{kind}: {bad[:5]}"
        stats = {int(ln.split()[0]): dict(kv.split("=") for kv in ln.split()[1:-1])
                 for ln in lines}
        # Reads smaller than a header and a record are refused, never cut.
        assert all(int(stats[n]["einval"]) > 0 for n in range(1, SUBBUF_HEADER_SIZE + 1))
        # (In turn with reads of 997 bytes, those get EINVAL at the largest record.)
        assert int(stats[SWEEP_SUBBUF]["einval"]) == (kind == "middle"), kind
        # Small reads in the middle of sub-buffers take continuation headers.
        assert int(stats[200]["cont"]) > (10 if kind == "start" else 2), kind
        for n in SWEEP_KEEP:
            data = raw(res, kind, str(n))
            recs, heads = parse_stream(data, name=f"{kind}/{n}")
            assert as_expected(recs) == want, f"{kind}/{n}"
            assert [r.seq for r in recs] == list(range(len(want))), f"{kind}/{n}"
            got = [json_record(x) for x in out(res, kind, f"{n}.json").splitlines()]
            assert [(g["seq"], g["ts_ns"]) for g in got] == \
                [(m.seq, m.ts_ns) for m in merged], f"{kind}/{n}"
            assert out(res, kind, f"{n}.err") == "", f"{kind}/{n}"


ENDS_SIZES = [1, 50, 120, 135, 136, 144, 200, 997, 4096, 65536]


@pytest.mark.parametrize("mode", MODES)
def test_reads_at_the_ends_of_sub_buffers(dti_guest, dti_tool, mode):
    # dd bs=N between batches of records: its reads start at the end of
    # the current sub-buffer, then at the end of one that closed since,
    # in the middle of the current one and at its start.  A dd that gets
    # EINVAL took nothing: one of the sub-buffer's size reads on.  All
    # the copies of each N decode, together and each alone, to every
    # record in order.
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    batches = [("e", 5), ("f", 1), ("g", 300), ("h", 3), ("i", 240), ("j", 1)]
    script = PRELUDE + """
        copy() {   # copy N CH K
            if ! dd if=$D/$2/trace0 of=/out/$2.$3 bs=$1 2> /dev/null; then
                echo "$3" >> /out/$2.einval
                dd if=$D/$2/trace0 bs=4096 2> /dev/null >> /out/$2.$3
            fi
            dti decode -F json /out/$2.$3 > /out/$2.$3.json 2> /out/$2.$3.err
        }
    """
    for n in ENDS_SIZES:
        ch = f"en{n}"
        script += f"ctl register_sub {ch} 4096 8 7 {MODES[mode]}\n"
        for k, (tag, count) in enumerate(batches):
            script += f"ctl printk {ch} 3 {count} 0 process {tag}\ncopy {n} {ch} {k}\n"
    res = dti_guest.run(script, smp=2, append=SLUB, timeout=900).check()
    want = [f"{tag} {i}\n" for tag, count in batches for i in range(count)]
    for n in ENDS_SIZES:
        ch = f"en{n}"
        whole = b"".join(raw(res, f"{ch}.{k}") for k in range(len(batches)))
        recs, heads = parse_stream(whole, name=ch)
        assert [r.text for r in recs] == want, ch
        assert [r.seq for r in recs] == list(range(len(want))), ch
        at = 0
        for k, (tag, count) in enumerate(batches):
            alone, _ = parse_stream(raw(res, f"{ch}.{k}"), name=f"{ch}.{k}")
            assert alone == recs[at:at + count], f"{ch}.{k}"
            got = [json_record(x) for x in out(res, f"{ch}.{k}.json").splitlines()]
            assert [(g["seq"], g["ts_ns"]) for g in got] == \
                [(r.seq, r.ts_ns) for r in alone], f"{ch}.{k}"
            assert out(res, f"{ch}.{k}.err") == "", f"{ch}.{k}"
            at += count
        einval = res.outdir / f"{ch}.einval"
        if n < SUBBUF_HEADER_SIZE + 16:
            assert einval.is_file(), ch
        elif n >= 200:
            assert not einval.is_file(), ch
        # Batches after the first start in the middle of a sub-buffer.
        assert sum(h["state"] == 2 for h in heads) >= 3, ch


def big_writes(subbuf: int, lengths) -> list:
    writes = [("printk", 5, "s")]
    for n in lengths:
        writes += [("event", 1, n), ("printk", 2, f"after{n}")]
    return writes


BIG_LENGTHS = [1, 2, 3, 4, 5, 7, 8, 9, 255, 256, 4095, 4096, 65535, 65536, 65537,
               100000]


@pytest.mark.parametrize("mode", MODES)
def test_records_of_every_size(dti_guest, dti_tool, readsizes, mode):
    # Records from 1 byte to the largest payload a channel accepts:
    #   - in 1 MiB sub-buffers, payloads up to 100,000 bytes among small
    #     records, read by cat (coreutils': 128 KiB reads) and decoded;
    #   - in 1 MiB and 4 MiB sub-buffers, the largest payload of each,
    #     read by dd with the sub-buffer's size, and dd with smaller
    #     reads, whose EINVAL at the big record takes nothing;
    #   - 200-byte reads of the same records (those refused followed by
    #     one of 1 MiB, as readsizes does), decoded whole;
    #   - dti read and dti snapshot of the largest record of 1 MiB
    #     sub-buffers, whose reads grow to hold it.
    dti_guest.extra_files[str(dti_tool)] = "/bin/dti"
    dti_guest.extra_files[str(readsizes)] = "/bin/readsizes"
    dti_guest.extra_files["/bin/cat"] = GCAT
    flag = MODES[mode]
    mid = big_writes(1 << 20, BIG_LENGTHS)
    top1 = big_writes(1 << 20, [max_payload(1 << 20)])
    top4 = big_writes(4 << 20, [max_payload(4 << 20)])
    res = dti_guest.run(PRELUDE + f"""
        ctl register_sub mid 1048576 4 7 {flag}
        {write_cmds("mid", mid)}
        {GCAT} $D/mid/trace0 > /out/mid.cat
        dti decode -F json /out/mid.cat > /out/mid.json 2> /out/mid.err
        mkdir /out/r200
        readsizes $D/mid/trace0 $D/mid/reset_consumed 1048576 200 200 0 /out/r200 200 \
            > /out/r200.txt
        ctl register_sub top1 1048576 4 7 {flag}
        {write_cmds("top1", top1)}
        dti read -F json top1 > /out/top1.read.json 2> /out/top1.read.err
        dti snapshot top1 /out/snap1 > /dev/null 2> /out/snap1.err
        dti decode -F json /out/snap1 > /out/snap1.json 2> /out/snap1.json.err
        echo 1 > $D/top1/reset_consumed
        if {GCAT} $D/top1/trace0 > /out/top1.cat 2> /out/top1.cat.err; then
            echo 0 > /out/top1.cat.rc; else echo $? > /out/top1.cat.rc; fi
        dd if=$D/top1/trace0 bs=1048576 2> /dev/null >> /out/top1.cat
        dti decode -F json /out/top1.cat > /out/top1.json 2> /out/top1.err
        ctl register_sub top4 4194304 3 7 {flag}
        {write_cmds("top4", top4)}
        dd if=$D/top4/trace0 of=/out/top4.dd bs=4194304 2> /dev/null
        dti decode -F json /out/top4.dd > /out/top4.json 2> /out/top4.err
    """, smp=2, mem=1024, append=SLUB, timeout=900).check()
    for name, writes, files in (("mid", mid, ["mid.cat", "r200/200"]),
                                ("top1", top1, ["top1.cat"]), ("top4", top4, ["top4.dd"])):
        want = expected(writes)
        for f in files:
            recs, _ = parse_stream(raw(res, f), name=f)
            assert as_expected(recs) == want, f
            assert [r.seq for r in recs] == list(range(len(want))), f
        got = [json_record(x) for x in out(res, f"{name}.json").splitlines()]
        assert len(got) == len(want), name
        assert out(res, f"{name}.err") == "", name
    assert out(res, "r200.txt").split()[-1] == "ok"
    # libdti's reader and dti snapshot grow their reads to the record.
    for f in ("top1.read", "snap1"):
        got = [json_record(x) for x in out(res, f"{f}.json").splitlines()]
        assert [g["seq"] for g in got] == list(range(len(expected(top1)))), f
    for f in ("top1.read.err", "snap1.err", "snap1.json.err"):
        assert out(res, f) == "", f
    # cat's 128 KiB reads cannot hold the largest record of 1 MiB
    # sub-buffers: refused with EINVAL, and what it refused came after.
    assert out(res, "top1.cat.rc").strip() != "0"
    assert "nvalid argument" in out(res, "top1.cat.err")
