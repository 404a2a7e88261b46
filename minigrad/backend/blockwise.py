"""Large array work cut into blocks of rows and spread over the CPU's cores.

NumPy runs each call on one core. An optimizer step is a dozen elementwise passes over every
parameter and its state, a softmax over a large vocabulary a handful of passes over every row:
work that falls apart into independent blocks along the first axis. A block small enough to
stay in cache is faster even on one core, and blocks run on all cores at once (NumPy releases
the GIL inside its loops) take about as many times less time as there are cores, where the
cores are free: OpenBLAS's threads spin for a while after each product, so they are stopped
before a large piece of work (`blas_threads.release_blas_threads`). Every element is computed
by the same ops whichever block and thread it falls in, so the result does not depend on the
block size or the number of threads.
"""

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .blas_threads import release_blas_threads

BLOCK_SIZE = 1 << 20  # elements of a task's largest array per block (Adam's five fit in L3)
_PARALLEL_FROM = 1 << 18  # below this many elements in all, threads cost more than they give
_RELEASE_BLAS_FROM = 1 << 21  # from this many, stopping BLAS's spinning threads pays


def core_count() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class BlockRunner:
    """Runs `(function, arrays)` tasks: `function(*blocks)` on matching slices of `arrays`
    along their first axis (arrays with the same first-axis length), which writes its results
    into the blocks in place. The calling thread and one helper thread per further core
    (started on first use) take blocks from one queue until it is empty."""

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads or core_count()
        self._pool: ThreadPoolExecutor | None = None
        self._helper_ids: set[int] = set()  # thread idents of the pool's threads
        if hasattr(os, "register_at_fork"):  # a forked child has none of the parent's threads
            os.register_at_fork(after_in_child=self._forget_pool)

    def _forget_pool(self):
        self._pool = None
        self._helper_ids = set()

    def _register_helper(self):
        self._helper_ids.add(threading.get_ident())

    def run(self, tasks: Iterable[tuple[Callable[..., None], Sequence[Any]]]) -> None:
        """Run the tasks, in blocks of about `BLOCK_SIZE` elements of each task's largest
        array."""
        calls = deque((function, blocks) for function, arrays in tasks
                      for blocks in _blocks(arrays, BLOCK_SIZE))
        total = sum(max(block.size for block in blocks) for _, blocks in calls)
        helpers = min(self.threads, len(calls)) - 1 if total >= _PARALLEL_FROM else 0
        pool = self._pool
        if helpers and pool is None:
            pool = self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="minigrad",
                                                   initializer=self._register_helper)
        if helpers and total >= _RELEASE_BLAS_FROM:
            release_blas_threads(self._helper_ids)
        started = [pool.submit(_drain, calls) for _ in range(helpers)] if pool else []
        try:
            _drain(calls)
        finally:
            for helper in started:
                helper.result()  # waits, and re-raises an error of a helper's block


def _drain(calls):
    """Run calls from the queue (deque.popleft is atomic) until none is left; an error
    empties the queue, so that every thread stops."""
    while calls:
        try:
            function, blocks = calls.popleft()
        except IndexError:  # another thread took the last one
            return
        try:
            function(*blocks)
        except BaseException:
            calls.clear()
            raise


def _blocks(arrays, size):
    """Matching slices (views) of the arrays along their first axis, whole rows, about `size`
    elements of the largest array each; 0-d arrays as one row of one element (views, so that
    what is written reaches them)."""
    if arrays[0].ndim == 0:
        return [[array.reshape(1) for array in arrays]]
    rows = arrays[0].shape[0]
    if rows == 0:
        return [arrays]
    row_size = max(array.size // rows for array in arrays) or 1
    step = max(1, size // row_size)
    return [[array[start:start + step] for array in arrays] for start in range(0, rows, step)]
