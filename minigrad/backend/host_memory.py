"""Keeping freed host memory for reuse, so that a training step does not page-fault.

A training step allocates and frees the same large arrays every time (activations, their
gradients, the optimizer's work arrays). By default glibc's malloc hands large freed blocks
back to the operating system (`munmap`, or trimming the top of the heap), and the next step
touches fresh pages: on the base benchmark Transformer, tens of thousands of page faults a
step (benchmarks/README.md has the figures). Raising two malloc thresholds keeps freed blocks in the
process for the next allocation of the same size; the process's memory then stays at its
peak instead of shrinking between steps.

The NumPy backend calls `keep_freed_memory()` when it is created. It does nothing where the C
library has no `mallopt` (macOS, musl) or when MINIGRAD_KEEP_HOST_MEMORY=0.
"""

import ctypes
import ctypes.util
import os

_M_TRIM_THRESHOLD = -1  # free memory at the top of the heap kept before giving it back
_M_MMAP_THRESHOLD = -3  # blocks at least this large get their own mmap (freed with munmap)
_MMAP_THRESHOLD = 32 * 1024 * 1024  # the largest value glibc accepts on 64-bit systems
_TRIM_THRESHOLD = 1024 * 1024 * 1024


def keep_freed_memory() -> bool:
    """Ask malloc to keep freed blocks for reuse; True if it was done."""
    if os.environ.get("MINIGRAD_KEEP_HOST_MEMORY", "1") == "0":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
