"""Taking the cores back from OpenBLAS's idle threads before minigrad's own threads need them.

OpenBLAS, NumPy's BLAS on Linux, runs a product on one worker thread per core. After a
product its workers do not sleep: they spin for about 0.1 s, each holding a core, waiting
for the next product. The long stretches of elementwise work that minigrad spreads over the
cores (the optimizer step, a softmax over a large vocabulary) start right after a product,
so its helper threads found the cores taken and gained little (Adam over the base benchmark
Transformer's 49 M parameters: benchmarks/README.md has the figures).

`release_blas_threads()` stops them with `blas_thread_shutdown_`, the call OpenBLAS makes
itself before a fork (its address is handed to `pthread_atfork`, so it is a plain C function
of no arguments); the next product starts them again.
Up to NumPy 2.4 the library exports it; NumPy 2.5's OpenBLAS (`libscipy_openblas64_`)
exports only its `scipy_`-prefixed API, and keeps the function as a local symbol of its ELF
symbol table (`.symtab`), where it is found and called at the library's load address.
Setting the thread count (`scipy_openblas_set_num_threads64_`, which threadpoolctl calls)
does not do this job: the workers spin on after `set_num_threads(1)` as before.

A thread that is inside a product while its workers are stopped would hang, so they are
stopped only when no Python thread is alive but the caller and the ones it names (minigrad's
helpers, which wait for work and never multiply while it runs); NumPy's BLAS is called from
Python threads only. Where NumPy's BLAS is not OpenBLAS (MKL, Accelerate), on systems
without /proc/self/maps, or with MINIGRAD_RELEASE_BLAS_THREADS=0, it does nothing;
`release_state()` says which, for benchmark records.
"""

import ctypes
import mmap
import os
import struct
import threading

SHUTDOWN = b"blas_thread_shutdown_"
_shutdowns = None  # blas_thread_shutdown_ of every OpenBLAS loaded, found on first use


def _loaded_openblas_paths():
    """The files of the OpenBLAS libraries this process has loaded (NumPy 2's is
    `numpy.libs/libscipy_openblas64_-<hash>.so`)."""
    try:
        with open("/proc/self/maps") as maps:
            fields = [line.split(None, 5) for line in maps]  # address ... path (if any)
    except OSError:
        return []
    paths = {parts[5].strip() for parts in fields if len(parts) == 6}
    return sorted(path for path in paths
                  if "openblas" in os.path.basename(path).lower() and ".so" in path)


def _local_function_value(path, name):
    """The value (address before relocation) of the function `name` in the ELF symbol table
    (`.symtab`) of the 64-bit little-endian shared library at `path`, or None."""
    with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as elf:
        if elf[:6] != b"\x7fELF\x02\x01":  # ELF, 64-bit, little-endian
            return None
        (table_at,) = struct.unpack_from("<Q", elf, 0x28)  # e_shoff
        entry_size, count = struct.unpack_from("<HH", elf, 0x3A)  # e_shentsize, e_shnum
        # (sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link, ...)
        sections = [struct.unpack_from("<IIQQQQI", elf, table_at + i * entry_size)
                    for i in range(count)]
        wanted = name + b"\0"
        for _, kind, _, _, offset, size, link in sections:
            if kind != 2:  # SHT_SYMTAB
                continue
            names_at = sections[link][4]
            # (st_name, st_info, st_other, st_shndx, st_value, st_size)
            for name_at, info, _, section, value, _ in struct.iter_unpack(
                    "<IBBHQQ", elf[offset:offset + size]):
                start = names_at + name_at
                if (info & 0xF == 2 and section != 0  # STT_FUNC, defined here
                        and elf[start:start + len(wanted)] == wanted):
                    return value
    return None


class _LinkMap(ctypes.Structure):
    _fields_ = [("l_addr", ctypes.c_size_t)]  # the load address: the first field


def _load_address(library):
    """Where the dynamic loader put `library` (a ctypes.CDLL): its link map's `l_addr`."""
    link_map = ctypes.POINTER(_LinkMap)()
    dlinfo = ctypes.CDLL(None).dlinfo
    if dlinfo(ctypes.c_void_p(library._handle), 2, ctypes.byref(link_map)) != 0:  # LINKMAP
        raise OSError("dlinfo failed")
    return link_map.contents.l_addr


def _shutdown_of(path):
    """`blas_thread_shutdown_` of the OpenBLAS at `path`: exported, or from its `.symtab`."""
    library = ctypes.CDLL(path)
    try:
        return getattr(library, SHUTDOWN.decode())
    except AttributeError:
        pass
    value = _local_function_value(path, SHUTDOWN)
    if value is None:
        return None
    return ctypes.CFUNCTYPE(ctypes.c_int)(_load_address(library) + value)


def _loaded_openblas_shutdowns():
    """`blas_thread_shutdown_` of each OpenBLAS library this process has loaded."""
    shutdowns = []
    for path in _loaded_openblas_paths():
        try:
            shutdown = _shutdown_of(path)
        except (OSError, ValueError, struct.error, AttributeError):
            continue
        if shutdown is not None:
            shutdowns.append(shutdown)
    return shutdowns


def _found_shutdowns():
    global _shutdowns
    if _shutdowns is None:
        _shutdowns = _loaded_openblas_shutdowns()
    return _shutdowns


def _turned_off():
    return os.environ.get("MINIGRAD_RELEASE_BLAS_THREADS", "1") == "0"


def release_state() -> str:
    """What `release_blas_threads` does in this process: "on" (it stops the workers of every
    OpenBLAS found), "off (MINIGRAD_RELEASE_BLAS_THREADS=0)", or "no OpenBLAS shutdown found"
    (NumPy's BLAS is not OpenBLAS, or its shutdown could not be found: nothing is stopped)."""
    if _turned_off():
        return "off (MINIGRAD_RELEASE_BLAS_THREADS=0)"
    return "on" if _found_shutdowns() else "no OpenBLAS shutdown found"


def _no_other_python_thread(own_threads):
    current = threading.current_thread()
    return all(thread is current or thread.ident in own_threads
               for thread in threading.enumerate())


def release_blas_threads(own_threads=()) -> bool:
    """Stop OpenBLAS's spinning workers if no other Python thread could be inside a product
    (`own_threads`: idents of threads known to be waiting, not multiplying). True if done."""
    if _turned_off():
        return False
    shutdowns = _found_shutdowns()
    if not shutdowns or not _no_other_python_thread(own_threads):
        return False
    for shutdown in shutdowns:
        shutdown()
    return True
