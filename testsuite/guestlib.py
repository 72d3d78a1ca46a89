"""Shell snippets shared by the guest tests.

PRELUDE loads dti.ko and the dti_test client and defines:
  ctl CMD...     run a dti_test command; fail the script unless ret=0
  try CMD...     run a dti_test command; print its result line
  snap CH DIR    copy CH's merged views, stats, info, level and a listing
                 of its directory to /out/DIR (trace files are not read)
  rawsnap CH DIR copy CH's per-CPU trace files to /out/DIR (consumes them)
  badwrite FILE TEXT   write TEXT with printf; print ACCEPTED or REFUSED

SAMPLE (after dti.ko is loaded) loads the sample driver, waits for its
channel's buffers, and defines:
  S, C           the driver's debugfs directory and its DTI channel's
  wait_idle      wait until every submitted request completed or timed out
"""

PRELUDE = r"""
insmod $DTI_MODDIR/dti.ko
insmod $DTI_MODDIR/dti_test.ko
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
