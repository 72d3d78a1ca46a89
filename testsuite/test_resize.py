"""Resizing a channel at run time (its `size` file, dti_resize(); issue
55), in a real guest kernel: under a flood from every CPU in three
contexts, with a trace file of the old buffers held open across it.

* the size file reads the bytes per CPU; writing one ("1M", "65536")
  gives the channel buffers of that size at once: info shows the new
  sub-buffer size, and the records after it are stored there;
* what the old buffers held is counted as discarded, what came while
  there were none as unavailable: the accounting identity holds on every
  CPU, so nothing is lost that is not counted;
* a trace file held open across it gets EIO on its next read, as after
  a destroy (debugfs cuts the files it removed off), and nothing reads
  the old buffers after they are gone (the log stays clean: SLUB's
  checks are on);
* a size out of range or not a size is refused with EINVAL and changes
  nothing.
"""

from __future__ import annotations

from dtirec import accounting_errors, parse_kv, parse_merged_ts, parse_stats
from guestlib import PRELUDE


def out(res, *parts) -> str:
    return res.outdir.joinpath(*parts).read_text()


def test_resize_under_load_counts_what_it_loses(dti_guest):
    res = dti_guest.run(PRELUDE + """
        ctl register rz 262144 7
        ctl bgflood rz
        sleep 1
        exec 3< $D/rz/trace0
        cat $D/rz/size > /out/size0
        echo 1M > $D/rz/size
        cat $D/rz/size > /out/size1
        cat $D/rz/info > /out/info1
        sleep 1
        echo 65536 > $D/rz/size
        cat $D/rz/info > /out/info2
        sleep 1
        ctl bgstop
        if cat <&3 > /out/held0 2> /out/held_err; then echo read > /out/held
        else echo failed > /out/held; fi
        exec 3<&-
        snap rz s
        badwrite $D/rz/size '100' > /out/bad_small
        badwrite $D/rz/size '1X' > /out/bad_text
        cat $D/rz/size > /out/size3
    """, smp=2, timeout=300, append="slub_debug=FZ").check()
    assert out(res, "size0") == "262144\n"
    assert out(res, "size1") == "1048576\n"
    assert parse_kv(out(res, "info1"))["subbuf_size"] == str(1048576 // 8)
    assert parse_kv(out(res, "info2"))["subbuf_size"] == str(65536 // 8)
    for bad in ("bad_small", "bad_text"):
        assert out(res, bad) == "REFUSED\n", bad
    assert out(res, "size3") == "65536\n"
    st = parse_stats(out(res, "s", "stats"))
    assert not accounting_errors(st)
    assert st["total"]["discarded"] > 0, ("the old buffers' records were not counted", st)
    recs = parse_merged_ts(out(res, "s", "merged-ts"))
    assert recs and all(r.text.startswith("flood ") for r in recs), recs[:3]
    # the records now held are those of the last buffers, gap-free per CPU
    for cpu in range(2):
        seqs = sorted(r.seq for r in recs if r.cpu == cpu)
        assert seqs and seqs == list(range(seqs[0], seqs[-1] + 1)), cpu
    assert out(res, "held") == "failed\n", "a trace file of the old buffers still read"
    assert "Input/output error" in out(res, "held_err"), out(res, "held_err")
    assert not res.outdir.joinpath("held0").read_bytes()
