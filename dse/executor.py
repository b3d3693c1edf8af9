"""Running independent jobs on Dask distributed: a LocalCluster on this machine (one
single-threaded worker process per core, since Verilator and Yosys are heavy) or an
existing cluster given by its scheduler's address. Before any job is sent, every
worker must report the same hwgen version as this process (a job checks it again
where it runs). A job's exception is returned with it, not raised: one failing point
does not stop a sweep or a campaign."""
from __future__ import annotations

import os
from typing import Callable, Iterable, Iterator

from distributed import Client, LocalCluster, as_completed

from hwgen import __version__
from hwgen.errors import HwgenError


# How long a given scheduler may take to answer (Dask retries a refused connection
# until then), and to show its first worker (one starting meanwhile).
CONNECT_SECONDS = 20
WORKER_WAIT_SECONDS = 60


def _worker_version() -> str:
    """Run on each worker: the version of the hwgen that worker imported."""
    return __version__


class Executor:
    """`with Executor(workers=N) as ex:` or `Executor(scheduler="tcp://HOST:8786")`;
    `ex.run(fn, jobs)` yields (index, result, error) as jobs complete (exactly one of
    result and error is None)."""

    def __init__(self, workers: int | None = None, scheduler: str | None = None):
        if workers is not None and scheduler is not None:
            raise HwgenError("give --workers (a local cluster) or --scheduler (an existing one), not both")
        if workers is not None and workers < 1:
            raise HwgenError(f"--workers {workers}: at least 1")
        self.workers = workers or os.cpu_count() or 1
        self.scheduler = scheduler
        self._cluster = None
        self.client: Client | None = None

    def __enter__(self) -> "Executor":
        try:
            if self.scheduler is not None:
                self.client = Client(self.scheduler, timeout=f"{CONNECT_SECONDS}s")
            else:
                self._cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                             dashboard_address=None, silence_logs=40)
                self.client = Client(self._cluster)
        except (OSError, TimeoutError) as e:
            self.close()
            raise HwgenError(f"cannot reach the Dask scheduler {self.scheduler}: {e}; start one with "
                             "`dask scheduler` and workers with `dask worker ADDRESS --nthreads 1`") from None
        try:
            self.client.wait_for_workers(1, timeout=WORKER_WAIT_SECONDS)
        except TimeoutError:
            self.close()
            raise HwgenError(f"the Dask scheduler {self.scheduler} has had no worker for {WORKER_WAIT_SECONDS} s; "
                             f"start some with `dask worker {self.scheduler} --nthreads 1`") from None
        versions = self.client.run(_worker_version)
        other = {w: v for w, v in versions.items() if v != __version__}
        if other:
            self.close()
            w, v = next(iter(other.items()))
            raise HwgenError(f"Dask worker {w} runs hwgen {v}, this command hwgen {__version__}: install the same "
                             "version on every worker")
        return self

    @property
    def description(self) -> str:
        n = len(self.client.scheduler_info(n_workers=-1)["workers"]) if self.client else 0
        where = self.scheduler or "a local cluster"
        return f"{n} Dask worker{'s' if n != 1 else ''} on {where}"

    def run(self, fn: Callable, jobs: Iterable) -> Iterator[tuple[int, object, BaseException | None]]:
        jobs = list(jobs)
        futures = {self.client.submit(fn, job, pure=False): k for k, job in enumerate(jobs)}
        for future in as_completed(futures):
            k = futures[future]
            error = future.exception()
            yield k, (None if error is not None else future.result()), error

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def __exit__(self, *exc) -> None:
        self.close()
