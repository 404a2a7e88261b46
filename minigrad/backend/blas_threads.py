"""Taking the cores back from OpenBLAS's idle threads before minigrad's own threads need them.

OpenBLAS, NumPy's BLAS on Linux, runs a product on one worker thread per core. After a
product its workers do not sleep: they spin for about 0.1 s, each holding a core, waiting
for the next product. The long stretches of elementwise work that minigrad spreads over the
cores (the optimizer step, a softmax over a large vocabulary) start right after a product,
so its helper threads found the cores taken and gained little: Adam over the base benchmark
Transformer's 49 M parameters took 103 ms with the workers spinning and 71 ms with them
stopped (benchmarks/README.md).

`release_blas_threads()` stops them with `blas_thread_shutdown_`, the call OpenBLAS makes
itself before a fork; the next product starts them again (~0.1 ms to stop, ~0.4 ms to
start). A thread that is inside a product while its workers are stopped would hang, so they
are stopped only when no Python thread is alive but the caller and the ones it names
(minigrad's helpers, which wait for work and never multiply while it runs); NumPy's BLAS is
called from Python threads only. Where NumPy's BLAS is not OpenBLAS (MKL, Accelerate), on
systems without /proc/self/maps, or with MINIGRAD_RELEASE_BLAS_THREADS=0, it does nothing.
"""

import ctypes
import os
import threading

_shutdowns = None  # blas_thread_shutdown_ of every OpenBLAS loaded, found on first use


def _loaded_openblas_shutdowns():
    """`blas_thread_shutdown_` of each OpenBLAS library this process has loaded."""
    try:
        with open("/proc/self/maps") as maps:
            fields = [line.split(None, 5) for line in maps]  # address ... path (if any)
        paths = {parts[5].strip() for parts in fields if len(parts) == 6}
    except OSError:
        return []
    shutdowns = []
    for path in sorted(paths):
        if "openblas" not in os.path.basename(path).lower() or ".so" not in path:
            continue
        try:
            shutdowns.append(ctypes.CDLL(path).blas_thread_shutdown_)
        except (OSError, AttributeError):
            pass
    return shutdowns


def _no_other_python_thread(own_threads):
    current = threading.current_thread()
    return all(thread is current or thread.ident in own_threads
               for thread in threading.enumerate())


def release_blas_threads(own_threads=()):
    """Stop OpenBLAS's spinning workers if no other Python thread could be inside a product
    (`own_threads`: idents of threads known to be waiting, not multiplying). True if done."""
    global _shutdowns
    if os.environ.get("MINIGRAD_RELEASE_BLAS_THREADS", "1") == "0":
        return False
    if _shutdowns is None:
        _shutdowns = _loaded_openblas_shutdowns()
    if not _shutdowns or not _no_other_python_thread(own_threads):
        return False
    for shutdown in _shutdowns:
        shutdown()
    return True
