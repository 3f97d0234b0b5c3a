"""How `smiles_to_graphs` shares its chunks between this process and its
worker processes: this process from the last chunk back until the pool
has started, the pool from the first on, the results in order; a pool
that starts after this process has taken every chunk, and errors from
either side."""

import concurrent.futures
import threading
import time

import pytest

from keras_laf.datasets import molecules

CHUNKS = [list(range(10 * i, 10 * i + 10)) for i in range(20)]
EXPECTED = [2 * x for x in range(200)]


class GatedPool:
    """A thread pool whose first `submit`, its start, waits for `opened`
    (as a process pool's waits for its fork server)."""

    def __init__(self, opened, threads=2):
        self.pool = concurrent.futures.ThreadPoolExecutor(threads)
        self.opened = opened
        self.started = False
        self.shut_down = threading.Event()

    def submit(self, function, *args):
        if not self.started:
            assert self.opened.wait(timeout=60)
            self.started = True
        return self.pool.submit(function, *args)

    def shutdown(self, wait=True):
        self.shut_down.set()
        self.pool.shutdown(wait=wait)


class Progress:
    def __init__(self):
        self.seen = 0

    def add(self, count):
        self.seen += count


class Doubler:
    """The task: doubles a chunk, noting whether this thread took it, and
    opens the pool once this thread has done `open_after` chunks."""

    def __init__(self, opened, open_after):
        self.opened = opened
        self.open_after = open_after
        self.by_this_thread = {}

    def __call__(self, chunk):
        here = threading.current_thread() is threading.main_thread()
        self.by_this_thread[chunk[0] // 10] = here
        if here and sum(self.by_this_thread.values()) >= self.open_after:
            self.opened.set()
        time.sleep(0.005)
        return [2 * x for x in chunk]


def share(task, pool):
    progress = Progress()
    sharing = molecules._ChunkSharing(task, CHUNKS, pool, 2, progress)
    return sharing.run(), progress.seen


def test_this_process_takes_from_the_last_back_and_the_pool_from_the_first():
    opened = threading.Event()
    task = Doubler(opened, open_after=3)
    pool = GatedPool(opened)
    results, seen = share(task, pool)
    assert results == EXPECTED and seen == 200
    taken_here = [task.by_this_thread[i] for i in range(20)]
    # The pool's chunks, then this thread's: one switch, both non-empty.
    switch = taken_here.index(True)
    assert 0 < switch <= 17
    assert all(taken_here[switch:]) and not any(taken_here[:switch])
    assert pool.shut_down.wait(timeout=10)


def test_a_pool_that_starts_after_the_last_chunk_was_taken_gets_none():
    opened = threading.Event()
    task = Doubler(opened, open_after=len(CHUNKS) + 1)
    pool = GatedPool(opened)
    results, seen = share(task, pool)
    assert results == EXPECTED and seen == 200
    assert all(task.by_this_thread.values())
    # The pool starts afterwards, takes nothing and is shut down.
    opened.set()
    assert pool.shut_down.wait(timeout=10)
    assert all(task.by_this_thread.values())


def test_an_error_in_a_worker_reaches_the_caller():
    def task(chunk):
        if threading.current_thread() is not threading.main_thread():
            raise KeyError(f"chunk {chunk[0] // 10}")
        time.sleep(0.005)
        return chunk

    opened = threading.Event()
    opened.set()
    with pytest.raises(KeyError, match="chunk 0"):
        share(task, GatedPool(opened))


def test_a_pool_that_cannot_start_stops_this_process_too():
    class BrokenPool(GatedPool):
        def submit(self, function, *args):
            raise concurrent.futures.process.BrokenProcessPool("no workers")

    done_here = []

    def task(chunk):
        done_here.append(chunk[0] // 10)
        time.sleep(0.05)
        return chunk

    pool = BrokenPool(threading.Event())
    with pytest.raises(concurrent.futures.process.BrokenProcessPool):
        share(task, pool)
    assert len(done_here) < len(CHUNKS)
    assert pool.shut_down.is_set()
