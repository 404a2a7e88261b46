"""OpenBLAS's spinning workers are stopped before large blockwise work
(`minigrad.backend.blas_threads`), only when no other Python thread could be inside a product,
and products work as before afterwards."""

import ctypes
import os
import subprocess
import sys
import threading

import numpy as np

from minigrad.backend import blas_threads, blockwise
from minigrad.backend.blockwise import BlockRunner

PROGRAM = """
import os
import numpy as np
from minigrad.backend.blas_threads import release_blas_threads

def threads():
    return len(os.listdir("/proc/self/task"))

a, b = (np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32) for _ in "ab")
first = a @ b  # starts OpenBLAS's workers (one per further core)
with_workers = threads()
released = release_blas_threads()
without_workers = threads()
again = a @ b  # starts them again
print(released, with_workers, without_workers, threads(), (again == first).all())
"""


def uses_openblas():
    blas = np.__config__.CONFIG.get("Build Dependencies", {}).get("blas", {})
    return "openblas" in str(blas.get("name", "")).lower()


def test_released_workers_stop_and_the_next_product_starts_them_again():
    fields = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                            check=True, timeout=120).stdout.split()
    released, with_workers, without_workers, restarted, same = fields
    assert same == "True"
    if uses_openblas():  # NumPy's wheels on Linux
        assert released == "True"
        assert int(with_workers) == int(restarted)
        if len(os.sched_getaffinity(0)) > 1:  # one worker per further core
            assert int(without_workers) < int(with_workers)
    else:
        assert released == "False" and with_workers == without_workers


def test_the_openblas_numpy_ships_is_found(monkeypatch):
    """Where NumPy's BLAS is OpenBLAS (its Linux wheels), the release finds the call that stops
    its workers: a NumPy whose OpenBLAS hides it (2.5's exports only `scipy_`-prefixed names)
    fails here instead of leaving the workers spinning unnoticed."""
    monkeypatch.delenv("MINIGRAD_RELEASE_BLAS_THREADS", raising=False)
    monkeypatch.setattr(blas_threads, "_shutdowns", None)  # looked up again
    if uses_openblas():
        assert blas_threads._loaded_openblas_paths()
        assert blas_threads._loaded_openblas_shutdowns()
        assert blas_threads.release_state() == "on"
    else:
        assert blas_threads.release_state() == "no OpenBLAS shutdown found"
    monkeypatch.setenv("MINIGRAD_RELEASE_BLAS_THREADS", "0")
    assert blas_threads.release_state() == "off (MINIGRAD_RELEASE_BLAS_THREADS=0)"


EXPORTED = ("blas_thread_shutdown_", "scipy_openblas_get_num_threads64_",
            "openblas_get_num_threads64_", "openblas_get_num_threads")


def test_a_function_found_in_the_symbol_table_is_where_the_loader_put_it():
    """The ELF symbol table read by hand gives, at the library's load address, the address
    that the dynamic loader gives for an exported function."""
    paths = blas_threads._loaded_openblas_paths()
    assert paths or not uses_openblas()
    for path in paths:
        library = ctypes.CDLL(path)
        assert blas_threads._local_function_value(path, b"blas_thread_shutdown_") is not None
        exported = [name for name in EXPORTED if hasattr(library, name)]
        assert exported, path
        for name in exported:
            value = blas_threads._local_function_value(path, name.encode())
            address = ctypes.cast(getattr(library, name), ctypes.c_void_p).value
            assert blas_threads._load_address(library) + value == address, name
        assert blas_threads._local_function_value(path, b"no_such_function_") is None


def test_a_file_that_is_not_elf_has_no_symbols(tmp_path):
    text = tmp_path / "libopenblas.so"
    text.write_text("not a library")
    assert blas_threads._local_function_value(str(text), b"blas_thread_shutdown_") is None


class Calls:
    def __init__(self):
        self.count = 0

    def __call__(self):
        self.count += 1


def test_refused_while_another_python_thread_is_alive(monkeypatch):
    shutdown = Calls()
    monkeypatch.setattr(blas_threads, "_shutdowns", [shutdown])
    monkeypatch.delenv("MINIGRAD_RELEASE_BLAS_THREADS", raising=False)
    known = {thread.ident for thread in threading.enumerate()}  # alive before: named as idle
    finish = threading.Event()
    other = threading.Thread(target=finish.wait)
    other.start()
    try:
        assert not blas_threads.release_blas_threads(known)
        assert blas_threads.release_blas_threads(known | {other.ident})
    finally:
        finish.set()
        other.join()
    assert blas_threads.release_blas_threads(known)
    assert shutdown.count == 2


def test_turned_off_by_the_environment(monkeypatch):
    shutdown = Calls()
    monkeypatch.setattr(blas_threads, "_shutdowns", [shutdown])
    monkeypatch.setenv("MINIGRAD_RELEASE_BLAS_THREADS", "0")
    assert not blas_threads.release_blas_threads()
    assert shutdown.count == 0


def test_block_runner_releases_before_large_work_only_naming_its_helpers_as_its_own(
        monkeypatch):
    named = []  # the threads each release call names as the runner's own
    monkeypatch.setattr(blockwise, "release_blas_threads", lambda own: named.append(set(own)))
    monkeypatch.setattr(blockwise, "BLOCK_SIZE", 64)
    monkeypatch.setattr(blockwise, "_PARALLEL_FROM", 0)
    monkeypatch.setattr(blockwise, "_RELEASE_BLAS_FROM", 1000)
    runner = BlockRunner(2)
    small, large = np.zeros(999, np.float32), np.zeros(1000, np.float32)
    workers = set()

    def add_one(block):
        workers.add(threading.get_ident())
        block += 1

    runner.run([(add_one, (small,))])
    assert named == []
    runner.run([(add_one, (large,))])  # the first run: the helper thread starts after it
    runner.run([(add_one, (large,))])  # the helper is alive now, and named
    assert len(named) == 2 and named[1]
    assert workers - {threading.get_ident()} <= named[1]
    assert (small == 1).all() and (large == 2).all()
