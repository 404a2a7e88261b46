"""Large elementwise updates, cut into blocks and spread over the CPU's cores.

NumPy runs each ufunc on one core. An optimizer step is a dozen elementwise passes over every
parameter and its state, compute-bound rather than memory-bound once the arrays are cut into
blocks that stay in cache, so running blocks on all cores at once (NumPy releases the GIL
inside a ufunc) takes the step about as many times less time as there are cores. Every
element is computed by the same ops whichever block and thread it falls in, so the result does
not depend on the number of threads.
"""

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor

BLOCK_SIZE = 1 << 20  # elements: a block of each of the five arrays of Adam fits in L3 cache
_PARALLEL_FROM = 1 << 18  # below this many elements in all, threads cost more than they give


def _core_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class BlockRunner:
    """Runs `(function, arrays)` tasks: `function(*blocks)` on matching blocks of `arrays`
    (arrays of one shape), which it changes in place. The calling thread and one helper
    thread per further core (started on first use) take blocks from one queue until it is
    empty."""

    def __init__(self, threads=None):
        self.threads = threads or _core_count()
        self._pool = None
        if hasattr(os, "register_at_fork"):  # a forked child has none of the parent's threads
            os.register_at_fork(after_in_child=self._forget_pool)

    def _forget_pool(self):
        self._pool = None

    def run(self, tasks):
        calls = deque((function, blocks) for function, arrays in tasks
                      for blocks in _blocks(arrays, BLOCK_SIZE))
        total = sum(blocks[0].size for _, blocks in calls)
        helpers = min(self.threads, len(calls)) - 1 if total >= _PARALLEL_FROM else 0
        if helpers and self._pool is None:
            self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="minigrad")
        started = [self._pool.submit(_drain, calls) for _ in range(helpers)]
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
    """Matching 1-D blocks (views) of C-contiguous arrays of one shape; the arrays whole when
    any of them is not C-contiguous (a flat view of it would be a copy)."""
    if not all(array.flags.c_contiguous for array in arrays):
        return [arrays]
    flat = [array.reshape(-1) for array in arrays]
    starts = range(0, flat[0].size, size) or [0]
    return [[array[start:start + size] for array in flat] for start in starts]
