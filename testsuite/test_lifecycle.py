"""Lifecycle faults (issue 24): dti.ko and its clients coming and going
while records are in flight, files are held open and scripts die.

* test_rmmod_while_clients_log: `rmmod dti` with clients loaded is
  refused and changes nothing; clients (dti_test's handle and channel,
  the sample driver) are unloaded while every CPU logs to them from
  process, softirq and hardirq context, and while a handle's buffers are
  being created; afterwards dti.ko unloads and loads again.
* test_files_held_open: every file of a relay channel, a persistent one,
  a handle's and a previous boot's .previous/NAME, held open
  (helpers/fdhold.c) and read, written, polled and mmapped after
  destroy, clear, unregister, the client's rmmod and dti.ko's rmmod,
  which is refused while a file of dti.ko's is open and then goes with
  only relay's trace files open.
* test_stap_killed_mid_run: staprun SIGKILLed while its dti.ko probes
  fire on every CPU and while a control-tapset script owns a channel and
  writes records: dti.ko stays usable, unloading the orphaned modules
  releases the channel and every reference on dti.ko.
* test_allocation_failure: the N-th allocation of a registration, of a
  handle's registration and of a handle's on-demand buffer creation
  fails, for N = 1, 2, ... until one succeeds: -ENOMEM and nothing left
  behind each time, then a working channel.  Needs the kernel's fault
  injection: DTI_KERNEL=debug.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from guestlib import PRELUDE, SAMPLE, STOP, WARM, start_stap
from harness import userland

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
FDHOLD_SRC = HERE / "helpers" / "fdhold.c"
EAGAIN_MSG = "Resource temporarily unavailable"


def out(res, name: str) -> str:
    return (res.outdir / name).read_text()


@pytest.fixture(scope="session")
def fdhold(build_dir, kernel) -> Path:
    """helpers/fdhold.c, static for the guest's architecture, rebuilt when stale."""
    try:
        return userland.static_helper(FDHOLD_SRC, build_dir / "helpers", kernel.arch)
    except userland.UserlandError as e:
        pytest.fail(str(e), pytrace=False)


# ---------------------------------------------------------------------------
# rmmod dti with clients; clients unloaded with records in flight

RMMOD = PRELUDE + SAMPLE + r"""
echo 20000 > $S/rate_hz
echo 200 > $S/submit
# rmmod dti while clients are loaded: refused, nothing changes.
ls $D > /out/ls-before
ls /sys/module/dti/holders > /out/holders
if rmmod dti 2> /out/rmmod-err; then echo gone > /out/rmmod-dti; else echo refused > /out/rmmod-dti; fi
ls $D > /out/ls-after
ctl register after 65536 7
ctl printk after 3 4 -1 process alive
cat $D/after/merged > /out/after-merged

# A handle cleaned up while every CPU logs to it (process, softirq and
# hardirq), with its merged view being read meanwhile.
ctl bgflood h_demand
until [ -e $D/h_demand/merged ]; do sleep 0.1; done
sleep 1
(while [ -e $D/h_demand/merged ]; do cat $D/h_demand/merged > /dev/null 2>&1 || :; done) &
RD=$!
awk '$1=="total"{print $2}' $D/h_demand/stats > /out/hd-written
rmmod dti_test
wait $RD
[ ! -e $D/h_demand ] && echo gone > /out/hd-gone
dmesg | grep 'bgflood: cleaning up' > /out/bg-msg || :

# A channel of its own: its writers stop, then it is unregistered.
insmod $DTI_MODDIR/dti_test.ko
ctl register bg 65536 7
ctl bgflood bg
sleep 1
rmmod dti_test
[ ! -e $D/bg ] && echo gone > /out/bg-gone

# A handle whose first records (from hardirq too) have its buffers being
# created by DTI's work item when the module goes.
i=0
while [ $i -lt 4 ]; do
    insmod $DTI_MODDIR/dti_test.ko
    ctl bgflood h_demand
    rmmod dti_test
    i=$((i + 1))
done
ls $D > /out/ls-quick

# The sample driver unloaded at 20 kHz with requests queued, and right
# after loading, its buffers being created.
echo 5000 > $S/submit
rmmod dti_sample
i=0
while [ $i -lt 4 ]; do
    insmod $DTI_MODDIR/dti_sample.ko
    echo 20000 > /sys/kernel/debug/dti_sample/rate_hz
    echo 50 > /sys/kernel/debug/dti_sample/submit
    rmmod dti_sample
    i=$((i + 1))
done
ls $D > /out/ls-end
cat /sys/module/dti/refcnt > /out/refcnt
rmmod dti
[ ! -e $D ] && echo gone > /out/dti-gone
insmod $DTI_MODDIR/dti.ko
insmod $DTI_MODDIR/dti_test.ko
ctl register again 16384 7
ctl printk again 3 2 -1 process again
cat $D/again/merged > /out/again
"""


def test_rmmod_while_clients_log(dti_guest):
    res = dti_guest.run(RMMOD, smp=2, timeout=300).check()
    # Refused while clients hold it, and nothing changed.
    assert out(res, "rmmod-dti") == "refused\n"
    assert EAGAIN_MSG in out(res, "rmmod-err"), out(res, "rmmod-err")
    assert set(out(res, "holders").split()) >= {"dti_test", "dti_sample"}
    assert out(res, "ls-after") == out(res, "ls-before")
    assert out(res, "after-merged") == "".join(f"alive {i}\n" for i in range(4))
    # Every CPU was logging to the handle when it was cleaned up.
    assert int(out(res, "hd-written")) > 1000, out(res, "hd-written")
    assert "while 2 CPUs log to it" in out(res, "bg-msg"), out(res, "bg-msg")
    for f in ("hd-gone", "bg-gone", "dti-gone"):
        assert out(res, f) == "gone\n", f
    # Nothing left behind by the quick loads, the sample driver or the
    # channels; no reference on dti.ko left.
    assert out(res, "ls-quick").split() == ["dti_sample"], out(res, "ls-quick")
    assert out(res, "ls-end").split() == [], out(res, "ls-end")
    assert out(res, "refcnt") == "0\n"
    assert out(res, "again") == "again 0\nagain 1\n"


# ---------------------------------------------------------------------------
# Files held open across destroy, clear, unregister and rmmod

REGION = "16M@0x30000000"
MEMMAP = "memmap=16M$0x30000000"
PERSIST_PRELUDE = PRELUDE.replace("insmod $DTI_MODDIR/dti.ko\n",
                                  f"insmod $DTI_MODDIR/dti.ko persist={REGION}\n", 1)
assert PERSIST_PRELUDE != PRELUDE

# Per channel: the files held and what a phase writes to each.
CHANNEL_FILES = ["r:trace0", "r:trace1", "r:merged", "r:merged-ts", "r:stats", "r:info",
                 "r:formats", "rw:level:7", "w:marker:hello", "w:marker_raw:xy",
                 "rw:marker_level:4", "w:reset_consumed:1", "rw:dump_on_panic:0"]
PREV_FILES = ["r:merged", "r:merged-ts", "r:trace0", "r:trace1", "r:status"]
VIEWS = ("trace0", "trace1", "merged", "merged-ts")


def specs(base: str, files: list[str]) -> str:
    return " ".join(f"{f.split(':', 1)[0]}:{base}/{f.split(':', 1)[1]}" for f in files)


HELD = PERSIST_PRELUDE + rf"""
# A previous load of dti.ko leaves .previous/pp.
ctl register_sub pp 4096 4 7 2
ctl printk pp 3 10 0 process prev0
ctl printk pp 3 10 1 process prev1
ctl unregister pp
rmmod dti_test
rmmod dti
insmod $DTI_MODDIR/dti.ko persist={REGION}
insmod $DTI_MODDIR/dti_test.ko
P=$D/.previous/pp
[ -e $P/merged ]
ctl register ro 65536 7
ctl register_sub pq 4096 4 7 2
for cpu in 0 1; do
    ctl printk ro 3 10 $cpu process ro$cpu
    ctl printk pq 3 10 $cpu process pq$cpu
    ctl hprintk h_demand 3 5 hd
done
until [ -e $D/h_demand/trace1 ]; do sleep 0.1; done

mkfifo /tmp/fdcmd
fdhold {specs("$D/ro", CHANNEL_FILES)} {specs("$D/pq", CHANNEL_FILES)} \
    {specs("$D/h_demand", CHANNEL_FILES)} {specs("$P", PREV_FILES)} \
    < /tmp/fdcmd > /out/fd.txt 2> /out/fd.err &
FH=$!
exec 3> /tmp/fdcmd
phase() {{
    echo "$1" >&3
    until grep -q "^@@PHASE $1 done" /out/fd.txt; do
        kill -0 $FH 2>/dev/null || {{ echo "fdhold died" >&2; exit 9; }}
        sleep 0.1
    done
}}
phase open
for c in ro pq h_demand; do echo destroy > $D/$c/level; done
phase destroyed
echo 1 > $P/clear
until [ ! -e $P ]; do sleep 0.1; done
phase cleared
ctl unregister ro
ctl unregister pq
phase unregistered
rmmod dti_test
phase client-gone
if rmmod dti 2> /out/rmmod-err1; then echo gone > /out/rmmod1; else echo refused > /out/rmmod1; fi
phase rmmod-refused
phase "keep /trace"
phase "close /pq/"
phase "close /.previous/"
cat /sys/module/dti/refcnt > /out/refcnt2
if rmmod dti 2> /out/rmmod-err2; then echo gone > /out/rmmod2; else echo refused > /out/rmmod2; fi
phase dti-gone
phase "close /"
if [ -e /sys/module/dti ]; then rmmod dti; fi
exec 3>&-
wait $FH
insmod $DTI_MODDIR/dti.ko
insmod $DTI_MODDIR/dti_test.ko
ctl register again 16384 7
ctl printk again 3 2 -1 process again
cat $D/again/merged > /out/again
"""


def parse_fd(text: str) -> dict[str, dict[str, dict[str, str]]]:
    """{phase: {path: {op: result}}} from fdhold's output."""
    got: dict[str, dict[str, dict[str, str]]] = {}
    for m in re.finditer(r"^@@FD (\S+) (\S+) (.*)$", text, re.M):
        got.setdefault(m[1], {})[m[2]] = dict(kv.split("=", 1) for kv in m[3].split())
    return got


def test_files_held_open(dti_guest, fdhold):
    D = "/sys/kernel/debug/dti"
    res = dti_guest.run(HELD, smp=2, mem=1024, append=MEMMAP, timeout=300,
                        extra_files={str(fdhold): "/bin/fdhold"}).check()
    text = out(res, "fd.txt")
    assert "@@CLOSED" in text, text[-2000:] + out(res, "fd.err")
    fd = parse_fd(text)
    held = {f"{D}/{c}/{f.split(':')[1]}" for c in ("ro", "pq", "h_demand") for f in CHANNEL_FILES}
    held |= {f"{D}/.previous/pp/{f.split(':')[1]}" for f in PREV_FILES}
    assert set(fd["open"]) == held

    def check(phase, path, read=None, write=None, poll=None):
        r = fd[phase][path]
        for op, want in (("read", read), ("write", write), ("poll", poll)):
            if want is not None:
                assert r[op] == want, (phase, path, op, r)

    def gone(phase, path):
        """A removed file: every operation fails with EIO; poll on a relay
        trace file says hangup, the others have no poll method and get
        the VFS's default (POLLIN | POLLOUT)."""
        r = fd[phase][path]
        assert r["read"] in ("EIO", "-") and r["write"] in ("EIO", "-"), (phase, path, r)
        relay = re.search(r"/(ro|h_demand)/trace\d$", path)
        assert r["poll"] == ("0x10" if relay else "0x5"), (phase, path, r)

    for path, r in fd["open"].items():
        if r["read"] != "-":
            assert not r["read"].startswith("E"), (path, r)
        if r["write"] != "-":
            assert r["write"].isdigit(), (path, r)
    for c in ("ro", "pq", "h_demand"):
        assert int(fd["open"][f"{D}/{c}/merged"]["read"]) > 0
        assert int(fd["open"][f"{D}/{c}/trace0"]["read"]) > 0
    # mmap: debugfs's file proxy in 6.1 has no mmap, so no trace file of
    # any kind maps, before or after (nothing can be left mapped).
    for phase in fd.values():
        for path, r in phase.items():
            assert r["map"] in ("ENODEV", "-") and r["mmap"] in ("ENODEV", "-"), (path, r)
    # lseek: a relay channel's trace file is a stream (kmod/dti_read.c's
    # dti_trace_fops has no llseek, as relay's own had no_llseek), so
    # lseek fails with ESPIPE and the read goes on where it was.
    relay_files = [p for p in fd["open"] if re.search(r"/(ro|h_demand)/trace\d$", p)]
    assert len(relay_files) == 4, sorted(fd["open"])
    for path in relay_files:
        assert fd["open"][path]["seek"] == "ESPIPE", (path, fd["open"][path])

    # destroy: the buffers' files and views go, the control files work.
    for c in ("ro", "pq", "h_demand"):
        for f in VIEWS:
            gone("destroyed", f"{D}/{c}/{f}")
        for f in ("stats", "info", "formats"):
            assert fd["destroyed"][f"{D}/{c}/{f}"]["read"].isdigit()
        check("destroyed", f"{D}/{c}/level", read="3", write="1")   # "-2\n" read, "7" written
        check("destroyed", f"{D}/{c}/marker", write="5")
    # The previous boot's records are there until clear, then gone.
    for f in PREV_FILES:
        path = f"{D}/.previous/pp/{f.split(':')[1]}"
        assert int(fd["destroyed"][path]["read"]) > 0, path
        gone("cleared", path)
    # unregister: every file of the channel fails, whatever it was.
    for c in ("ro", "pq"):
        for f in CHANNEL_FILES:
            gone("unregistered", f"{D}/{c}/{f.split(':')[1]}")
        assert fd["unregistered"][f"{D}/h_demand/stats"]["read"].isdigit()
    for f in CHANNEL_FILES:
        gone("client-gone", f"{D}/h_demand/{f.split(':')[1]}")
    # rmmod dti waits for nothing and frees nothing under an open file:
    # refused while a file of dti.ko's is open ...
    assert out(res, "rmmod1") == "refused\n"
    assert EAGAIN_MSG in out(res, "rmmod-err1")
    # ... and with only the relay channels' trace files left open it goes
    # if they do not pin it (relay's own file operations), else it is
    # refused until they are closed.  They stay dead files either way.
    pinned = int(out(res, "refcnt2")) > 0
    assert out(res, "rmmod2") == ("refused\n" if pinned else "gone\n"), out(res, "rmmod-err2")
    assert set(fd["dti-gone"]) == {f"{D}/{c}/trace{n}" for c in ("ro", "h_demand")
                                   for n in (0, 1)}
    for path in fd["dti-gone"]:
        gone("dti-gone", path)
    assert out(res, "again") == "again 0\nagain 1\n"


# ---------------------------------------------------------------------------
# A stap session killed mid-run

SCRIPTS = REPO / "scripts"


def test_stap_killed_mid_run(tapset_guest, stap, modules):
    """SIGKILL to staprun: the modules the suite already builds for
    test_scripts_load (dti_watch under a flood) and test_control_guest
    (dti_inject creating its channel "inj"), so a full run compiles
    nothing more."""
    dti_test = next(m for m in modules if m.name == "dti_test.ko")
    plain = next(m for m in modules if m.name == "dti_plain.ko")
    watch = stap.compile(SCRIPTS / "dti_watch.stp", name="dti_watch_flood",
                         opts=["-DSTP_NO_OVERLOAD", "-d", str(dti_test), "-E", WARM])
    inject = stap.compile(SCRIPTS / "dti_inject.stp", name="inject_plain_function",
                          args=[f'module("{plain}").function("plain_compute")',
                                "inj", "5", "32"])
    script = PRELUDE + r"""
insmod $DTI_MODDIR/dti_plain.ko
P=/sys/kernel/debug/dti_plain/poke
cat /sys/module/dti/refcnt > /out/refcnt-before
""" + start_stap(watch, "/out/watch.txt", ready="dti_watch: watching", params="quiet=1") + f"""
W=$SP
staprun -o /out/inj.txt {inject.guest_path} &
I=$!
n=0
until [ -e $D/inj/merged ] && grep -q plain_compute $D/inj/merged; do
    n=$((n + 1)); [ $n -lt 600 ] || {{ echo "inject never logged" >&2; exit 9; }}
    kill -0 $I || {{ echo "inject died" >&2; exit 9; }}
    echo '1 1' > $P
    sleep 0.2
done
ctl register wl 262144 7
ctl register alive 16384 7
echo "floodctx wl 4000" > $T &
FP=$!
(while :; do echo '6 7' > $P; done) &
PK=$!
sleep 1
kill -9 $W $I
wait $W || :
wait $I || :
lsmod | awk '{{print $1}}' > /out/lsmod-killed
# dti.ko serves the flood's channel and the others meanwhile (markers:
# dti_test is busy with the flood).
echo alive > $D/alive/marker
echo destroy > $D/alive/level
echo 7 > $D/alive/level
echo again > $D/alive/marker
cat $D/alive/merged > /out/alive
wait $FP
cat $T > /out/flood
awk '$1=="total"{{print $2}}' $D/wl/stats > /out/wl-written
# The orphaned modules go while every CPU floods again.
echo "floodctx wl 3000" > $T &
FP=$!
sleep 1
rmmod {watch.name}
rmmod {inject.name}
wait $FP
kill $PK; wait $PK || :
lsmod | awk '{{print $1}}' > /out/lsmod-after
cat $D/inj/level > /out/inj-level
grep -c plain_compute $D/inj/merged > /out/inj-records
cat /sys/module/dti/refcnt > /out/refcnt-after
# Released: dti_test can take the channel over, as a new script could.
try ctl_create inj 5 -1 process 32768 > /out/adopt
cat $D/inj/level > /out/inj-adopted
ctl ctl_release
rmmod dti_test
rmmod dti_plain
rmmod dti
[ ! -e $D ] && echo gone > /out/dti-gone
"""
    res = tapset_guest.run(script, smp=2, timeout=400, tcg_single=True,
                           extra_files=stap.guest_files(watch, inject)).check()
    killed = out(res, "lsmod-killed").split()
    # SIGKILL leaves the modules loaded, their probes still firing ...
    assert watch.name in killed and inject.name in killed, killed
    assert re.fullmatch(r"sh\[\d+\]: again\n", out(res, "alive")), out(res, "alive")
    assert re.search(r"^ret=0 calls=\d+ stored=\d+", out(res, "flood"), re.M)
    assert int(out(res, "wl-written")) > 1000
    # ... until they are unloaded: then the script's channel is switched
    # off with its records, released, and dti.ko holds no reference more.
    after = out(res, "lsmod-after").split()
    assert watch.name not in after and inject.name not in after, after
    assert out(res, "inj-level") == "-1\n"
    assert int(out(res, "inj-records")) > 0
    assert out(res, "refcnt-after") == out(res, "refcnt-before")
    assert re.match(r"ret=0 stored=1 errors=0 ", out(res, "adopt")), out(res, "adopt")
    assert out(res, "inj-adopted") == "5\n"
    assert out(res, "dti-gone") == "gone\n"


# ---------------------------------------------------------------------------
# Allocation failure: fault injection's fail_nth on the debug kernel

FAULT_CONFIG = ("CONFIG_FAULT_INJECTION=y", "CONFIG_FAILSLAB=y", "CONFIG_FAIL_PAGE_ALLOC=y",
                "CONFIG_FAULT_INJECTION_DEBUG_FS=y")

FAILSLAB = PRELUDE + r"""
F=/sys/kernel/debug
# fail_nth fails the N-th allocation fault injection sees; let it see
# GFP_KERNEL ones (slab and pages, relay's order-0 pages included).
# Each failure fault injection makes counts down "times".
for a in failslab fail_page_alloc; do
    echo N > $F/$a/ignore-gfp-wait
    echo 0 > $F/$a/verbose
    echo 1000000 > $F/$a/times
done
echo 0 > $F/fail_page_alloc/min-order
ls $D > /tmp/ls0

# dti_register()
n=1
while :; do
    r=$(try failnth $n register fr 8192 7)
    if [ -e $D/fr ]; then l=$(ls $D/fr | tr '\n' ,); else l=none; fi
    echo "REG $n $r dir=$l" >> /out/reg
    case "$r" in *injected=0*) break;; esac
    # A failure something absorbed (kmemleak's pool, say): start again.
    if [ -e $D/fr ]; then ctl unregister fr; fi
    n=$((n + 1)); [ $n -lt 400 ] || break
done
ctl printk fr 3 4 -1 process ok
cat $D/fr/merged > /out/reg-merged
ctl unregister fr
ls $D > /tmp/ls1
cmp /tmp/ls0 /tmp/ls1 && echo same > /out/reg-ls

# INIT_DTI_HANDLE() of an early handle with records pending: a record
# more before each try.  A failure something absorbed (kmemleak's pool,
# say) gives a registered handle: it is cleaned up and tried again.
first=1
n=1
while :; do
    ctl hprintk h_raw 3 1 raw$n
    r=$(try failnth $n handle_init h_raw)
    if [ -e $D/h_raw ]; then l=$(ls $D/h_raw | tr '\n' ,); else l=none; fi
    m=none
    if [ -e $D/h_raw/merged ]; then m=$(tr ' \n' '_,' < $D/h_raw/merged); fi
    echo "HANDLE $n $r dir=$l first=$first merged=$m" >> /out/handle
    case "$r" in *injected=0*) break;; esac
    case "$r" in *err=0*) ctl unregister h_raw; ctl hlevel h_raw 7; first=$((n + 1));; esac
    n=$((n + 1)); [ $n -lt 400 ] || break
done
cat $D/h_raw/info > /out/handle-info

# The on-demand creation of h_demand's buffers, in DTI's work item; an
# absorbed failure gives buffers: destroyed, and tried again.
first=1
n=1
while :; do
    r=$(try failwork $n h_demand od$n)
    l=$(ls $D/h_demand | tr '\n' ,)
    b=$(sed -n 's/^buffers: //p' $D/h_demand/info)
    m=none
    if [ -e $D/h_demand/merged ]; then m=$(tr '\n' , < $D/h_demand/merged); fi
    echo "WORK $n $r dir=$l buffers=$b first=$first merged=$m" >> /out/work
    case "$r" in *injected=0*|*ran=0*) break;; esac
    if [ "$b" = allocated ]; then
        echo destroy > $D/h_demand/level
        echo 7 > $D/h_demand/level
        first=$((n + 1))
    fi
    n=$((n + 1)); [ $n -lt 400 ] || break
done
cat $D/h_demand/info > /out/work-info
cat $F/failslab/times > /out/slab-times
cat $F/fail_page_alloc/times > /out/page-times
"""


def parse_loop(text: str, kind: str) -> list[dict[str, str]]:
    rows = []
    for line in text.splitlines():
        f = line.split()
        assert f[0] == kind, line
        rows.append({"n": f[1], **dict(kv.split("=", 1) for kv in f[2:])})
    return rows


def test_allocation_failure(dti_guest, kernel):
    config = kernel.config() or set()
    if not all(line in config for line in FAULT_CONFIG):
        pytest.skip("needs fault injection (DTI_KERNEL=debug)")
    # fail_nth also fails kmemleak's own bookkeeping, which it survives
    # by scanning a whole object: not a leak, not DTI's.
    res = dti_guest.run(FAILSLAB, smp=2, timeout=600,
                        allow=[r"kmemleak: Cannot allocate a scan area"]).check()
    control = {"level", "reset_consumed", "stats", "info", "formats", "dump_on_panic",
               "marker", "marker_raw", "marker_level", "stop_on"}
    full = control | {"trace0", "trace1", "merged", "merged-ts"}

    absorbed = 0

    def whole(row, files):
        return set(row["dir"].rstrip(",").split(",")) == files

    def failures_checked(rows, gone):
        """Every injected failure is -ENOMEM with the fields @gone "none"
        (nothing left), or absorbed by the kernel with a whole channel;
        the run with no failure left works.  Returns the absorbed ones."""
        *failed, last = rows
        assert len(failed) >= 10, rows
        n = 0
        for r in failed:
            assert r["injected"] == "1", r
            if r["err"] == "0":
                assert whole(r, full), r
                n += 1
            else:
                assert r["err"] == "-12" and all(r[k] == "none" for k in gone), r
        assert last["injected"] == "0" and last["err"] == "0" and whole(last, full), last
        return n

    # dti_register(): every failure leaves nothing; then a working one.
    reg = parse_loop(out(res, "reg"), "REG")
    absorbed += failures_checked(reg, ("dir",))
    assert out(res, "reg-merged") == "".join(f"ok {i}\n" for i in range(4))
    assert out(res, "reg-ls") == "same\n"

    def pending_checked(rows, info_file, tag, fmt):
        """Each time the buffers came, they held the records logged since
        the last time, oldest first, none twice; those the 1 KiB store
        had no room for are counted as pending_lost."""
        lost = 0
        for r in rows:
            if r["merged"] == "none":
                continue
            got = r["merged"].rstrip(",").split(",")
            want = [fmt(i) for i in range(int(r["first"]), int(r["n"]) + 1)]
            assert got == want[:len(got)] and got, (r, want)
            lost += len(want) - len(got)
        info = dict(re.findall(r"^(\w+): (\S+)$", out(res, info_file), re.M))
        assert int(info["pending_lost"]) == lost, (tag, info, lost)

    # INIT_DTI_HANDLE() with records pending: they survive every failure.
    handle = parse_loop(out(res, "handle"), "HANDLE")
    absorbed += failures_checked(handle, ("dir", "merged"))
    pending_checked(handle, "handle-info", "handle", lambda i: f"raw{i}_0")

    # On-demand creation: each failure leaves the control files only and
    # the records pending; the next record's work creates the buffers.
    work = parse_loop(out(res, "work"), "WORK")
    *failed, last = work
    assert len(failed) >= 10, work
    for r in failed:
        assert r["ran"] == "1" and r["injected"] == "1", r
        if r["buffers"] == "allocated":
            assert whole(r, full), r
            absorbed += 1
        else:
            assert r["buffers"] == "none" and whole(r, control), r
    assert last["ran"] == "1" and last["injected"] == "0", last
    assert last["buffers"] == "allocated" and whole(last, full), last
    pending_checked(work, "work-info", "work", lambda i: f"od{i}")
    # fail_nth reached page allocations too (relay's buffers' pages).
    slabs = 1000000 - int(out(res, "slab-times"))
    pages = 1000000 - int(out(res, "page-times"))
    assert pages > 0 and slabs > 0, (slabs, pages)
    print(f"allocations failed one by one: dti_register {len(reg) - 1}, "
          f"INIT_DTI_HANDLE {len(handle) - 1}, "
          f"on-demand creation {len(work) - 1}; of them slab {slabs}, pages {pages}; "
          f"absorbed (a whole channel all the same): {absorbed}")
