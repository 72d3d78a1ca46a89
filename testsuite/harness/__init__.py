"""DTI test harness: boot Debian's installed kernel in QEMU and run shell scripts.

    from harness import vm
    res = vm.run("uname -r", smp=2, modules=[...], extra_files={...})
    res.check(); res.rc, res.stdout, res.console, res.outdir

Modules: kernel (find KVER/vmlinuz/build dir), initramfs (cached base cpio +
per-test cpio), vm (QEMU runner, Result, VMLost, Guest), logcheck (kernel
splat detection).
"""

from .kernel import Kernel, KernelNotFound, find_kernel
from .logcheck import find_splats
from .vm import Guest, Result, VMLost, VMPanic, VMTimeout, run

__all__ = ["Kernel", "KernelNotFound", "find_kernel", "find_splats", "Guest",
           "Result", "VMLost", "VMPanic", "VMTimeout", "run"]
