"""The study's independent runs spread over the cores.

A run of the warmup ladders (E5, E6), of ReZero's arms (E8), of E9's models or of a grid is a
small model trained or measured for a few hundred steps: most of its time is Python around
small products, which one core runs whatever the number of BLAS threads. So `map_runs` gives
each core a process of its own: forked (each child inherits the parent's data, the function and
its closure, nothing is pickled but the items and the results), each with one BLAS thread.
Every run seeds its own model and batches, so the results do not depend on which process ran
them; their last digits may differ from a run in one process with several BLAS threads (another
order of the products' sums).
"""

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from minigrad.backend import core_count

Item = TypeVar("Item")
Result = TypeVar("Result")

_run: Callable[[Any], Any] | None = None  # the function of the map in progress (children
#                                             inherit it through the fork)


def map_runs(run: Callable[[Item], Result], items: Sequence[Item],
             processes: int = 0) -> Iterator[Result]:
    """run(item) for each item, yielded in order as each is done, computed in `processes`
    forked processes (0: one per core); in this process where there is one process, one
    item, or no fork (not on Linux or macOS)."""
    processes = process_count(processes, len(items))
    if processes <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        yield from map(run, items)
        return
    global _run
    _run = run
    try:
        with multiprocessing.get_context("fork").Pool(processes, _one_blas_thread) as pool:
            yield from pool.imap(_call, items, chunksize=1)
    finally:
        _run = None


def process_count(processes: int, runs: int) -> int:
    """How many processes `runs` runs take: `processes` (0: one per core), at most one a run."""
    return min(processes or core_count(), runs)


def _one_blas_thread() -> None:
    from threadpoolctl import threadpool_limits  # the `examples` extra

    threadpool_limits(1, user_api="blas")


def _call(item: Any) -> Any:
    assert _run is not None
    return _run(item)
