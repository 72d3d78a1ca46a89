"""Shell snippets shared by the guest tests.

PRELUDE loads dti.ko and the dti_test client and defines (PRELUDE_FUNCS
defines them and loads nothing):
  ctl CMD...     run a dti_test command; fail the script unless ret=0
  try CMD...     run a dti_test command; print its result line
  snap CH DIR    copy CH's merged views, stats, info, level and a listing
                 of its directory to /out/DIR (trace files are not read)
  rawsnap CH DIR copy CH's per-CPU trace files to /out/DIR (consumes them)
  badwrite FILE TEXT   write TEXT with printf; print ACCEPTED or REFUSED

flood_reading(chan, cmd, snaps) runs a dti_test flood command in the
background and copies CHAN's merged-ts to /out/snapN until it ends.
start_stap(mod, out, ...) starts a compiled SystemTap module and waits
until it runs (and its dti.ko probes fire); STOP interrupts it.

plain_setup(chan) loads dti.ko and dti_plain (a module that knows nothing of
DTI) and defines P, its poke file, and C, /sys/kernel/debug/dti/CHAN.

SAMPLE (after dti.ko is loaded) loads the sample driver, waits for its
channel's buffers, and defines:
  S, C           the driver's debugfs directory and its DTI channel's
  wait_idle      wait until every submitted request completed or timed out
"""

def self_nmi_unsupported(kernel) -> str | None:
    """Why dti_test's and dti_stress's self-NMIs ("nmi", "badapi CASE
    nmi", the stress run's NMI writer) cannot run in `kernel`'s guest;
    None where they can (x86-64)."""
    if kernel.arch == "x86_64":
        return None
    return (f"self-NMIs are x86's (register_nmi_handler() and the local APIC); on "
            f"{kernel.arch} a module has no NMI to send itself, and dti_test answers "
            "EOPNOTSUPP")


# The files every channel directory holds, buffers or not; with buffers
# also VIEW_FILES and the per-CPU trace files.
CONTROL_FILES = frozenset({"level", "reset_consumed", "stats", "info", "dump_on_panic",
                           "marker", "marker_raw", "marker_level",
                           "formats", "stop_on", "size", "context"})
VIEW_FILES = frozenset({"merged", "merged-ts"})

# PRELUDE's shell functions, with nothing loaded.
PRELUDE_FUNCS = r"""
D=/sys/kernel/debug/dti
T=/sys/kernel/debug/dti_test/ctl
ctl() {
    echo "$*" > $T
    r=$(cat $T)
    case "$r" in
    ret=0*) ;;
    *) echo "dti_test command failed: $* => $r" >&2; return 1;;
    esac
}
try() { echo "$*" > $T; cat $T; }
snap() {
    mkdir -p /out/$2
    for f in merged merged-ts stats info level; do
        if [ -e $D/$1/$f ]; then cat $D/$1/$f > /out/$2/$f; fi
    done
    ls $D/$1 > /out/$2/ls
}
rawsnap() {
    mkdir -p /out/$2
    for f in $D/$1/trace*; do
        if [ -e "$f" ]; then cat "$f" > /out/$2/${f##*/}; fi
    done
}
badwrite() {
    if printf '%b' "$2" > $1 2>/dev/null; then echo ACCEPTED; else echo REFUSED; fi
}
"""

PRELUDE = r"""
insmod $DTI_MODDIR/dti.ko
insmod $DTI_MODDIR/dti_test.ko
""" + PRELUDE_FUNCS

SAMPLE = r"""
insmod $DTI_MODDIR/dti_sample.ko
S=/sys/kernel/debug/dti_sample
C=/sys/kernel/debug/dti/dti_sample
wait_idle() {
    n=0
    until awk '$1=="submitted"{s=$2} $1=="completed"||$1=="timeouts"{d+=$2} END{exit d!=s}' $S/counters; do
        n=$((n+1)); [ $n -lt 600 ] || { echo "sample driver not idle: $(cat $S/counters)" >&2; return 1; }
        sleep 0.1
    done
}
# The driver's first record has DTI create the buffers in a work item.
n=0
until [ -e $C/merged ] || [ $n -gt 100 ]; do sleep 0.1; n=$((n+1)); done
"""


def flood_reading(chan: str, cmd: str, snaps: int) -> str:
    """Guest shell: run the dti_test command `cmd` (a flood) in the
    background, copy CHAN's merged-ts to /out/snap0, /out/snap1 ... (at
    most `snaps`) while it runs, then its result line to /out/result."""
    return f"""
echo "{cmd}" > $T &
FP=$!
i=0
while kill -0 $FP 2>/dev/null && [ $i -lt {snaps} ]; do
    cat $D/{chan}/merged-ts > /out/snap$i
    i=$((i+1))
done
wait $FP
cat $T > /out/result
"""


# A probe that start_stap() adds (stap -E) to know when dti.ko probes fire.
WARM = 'probe dti.printk { if (channel == "stapwarm") printf("WARM %d\\n", seq) }'


def start_stap(mod, out_file: str, ready: str = "^READY", params: str = "",
               warm: bool = True, err_file: str = "") -> str:
    """Guest shell (after PRELUDE): run the compiled SystemTap module `mod`
    in the background writing `out_file` ($SP is staprun's pid), with
    module parameters `params` (-G globals), and wait until its begin
    probe printed a line matching `ready`.  With `warm`, also wait until
    its dti.ko probes fire (SystemTap 4.8 arms module probes a moment after
    the begin probe ran): a channel "stapwarm" is written to until the
    script's WARM probe (compile with -E WARM) reports it."""
    from harness.stap import staprun_cmd
    sh = f"""
{staprun_cmd(mod, *params.split(), opts=f'-o {out_file}')}{' 2>' + err_file if err_file else ''} &
SP=$!
n=0
until grep -q '{ready}' {out_file} 2>/dev/null; do
    n=$((n + 1)); [ $n -lt 600 ] || {{ echo "stap did not start" >&2; exit 9; }}
    kill -0 $SP 2>/dev/null || {{ echo "staprun died" >&2; cat {out_file} >&2; exit 9; }}
    sleep 0.1
done
"""
    if warm:
        sh += f"""
[ -d $D/stapwarm ] || ctl register stapwarm 16384 7
until grep -q '^WARM ' {out_file} 2>/dev/null; do
    n=$((n + 1)); [ $n -lt 600 ] || {{ echo "probes never fired" >&2; exit 9; }}
    ctl printk stapwarm 0 1 -1 process warm
    sleep 0.1
done
"""
    return sh


STOP = """
kill -INT $SP
wait $SP || true
"""


def plain_setup(chan: str) -> str:
    """Guest shell: load dti.ko and dti_plain; $P is dti_plain's poke file
    ("A B" calls plain_compute(A, B)), $C the debugfs directory of CHAN."""
    return f"""
insmod $DTI_MODDIR/dti.ko
insmod $DTI_MODDIR/dti_plain.ko
P=/sys/kernel/debug/dti_plain/poke
C=/sys/kernel/debug/dti/{chan}
"""


def persist_prelude(region: str, persist: str) -> str:
    """The shell a boot of the persistent-channel tests starts with: dti.ko
    with persist=REGION and dti_test loaded, ctl, say (to the output and
    the console), nocaller, digest DIR NAME, and BOOTNO (the region's
    count of boots, from PERSIST, dti.ko's .persist file)."""
    return rf"""
say() {{ echo "@@$*"; echo "@@$*" > /dev/console; }}
insmod $DTI_MODDIR/dti.ko persist={region}
insmod $DTI_MODDIR/dti_test.ko
D=/sys/kernel/debug/dti
T=/sys/kernel/debug/dti_test/ctl
ctl() {{
    echo "$*" > $T
    r=$(cat $T)
    case "$r" in
    ret=0*) ;;
    *) echo "dti_test command failed: $* => $r" >&2; return 1;;
    esac
}}
nocaller() {{ sed -E 's/^(\[[^]]*\] cpu[0-9]+ L[0-9]+ #[0-9]+) [^:]*: /\1: /' $1; }}
digest() {{
    n=$(wc -l < $1/merged)
    m=$(md5sum < $1/merged | cut -c1-32)
    t=$(nocaller $1/merged-ts | md5sum | cut -c1-32)
    say "DIGEST $2 $n $m $t"
}}
BOOTNO=$(sed -n 's/^boots //p' {persist})
say BOOT $BOOTNO
"""
