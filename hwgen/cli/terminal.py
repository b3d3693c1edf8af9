"""What commands print while and after they work: the console, and progress on
stderr (a bar or a spinner on a terminal, lines in a log)."""
from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import Progress, TimeElapsedColumn

UNWRAPPED = 10_000  # a piped console's width: wider than any line hwgen prints
PROGRESS_PERIOD = 5.0  # seconds between progress lines when stderr is not a terminal


def console(stderr: bool = False) -> Console:
    """A console on stdout (or stderr): wrapped to the terminal's width on a terminal,
    never wrapped when piped (one line per record, for grep and diff)."""
    if (sys.stderr if stderr else sys.stdout).isatty():
        return Console(stderr=stderr)
    return Console(stderr=stderr, width=UNWRAPPED, soft_wrap=True)


class _Lines:
    """Progress as lines on stderr, for logs: the first report at once, then the
    latest at most every PROGRESS_PERIOD seconds, and the last count. While the work
    runs (inside `with`), the latest report is repeated every PROGRESS_PERIOD seconds
    in which none came: one step (a Verilator build, a zoo network's calibration) may
    report nothing for minutes, and a log must show that the command still works."""

    def __init__(self, what: str, text: str = ""):
        self.what, self.text, self.t0, self.last = what, text, time.monotonic(), None
        self._lock, self._done = threading.Lock(), threading.Event()
        self._beat = threading.Thread(target=self._heartbeat, daemon=True)

    def __enter__(self):
        self._beat.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._beat.join()
        return False

    def report(self, text: str, final: bool = False) -> None:
        with self._lock:
            self.text = text
            now = time.monotonic()
            if final or self.last is None or now - self.last >= PROGRESS_PERIOD:
                self._print(now)

    def _heartbeat(self) -> None:
        while not self._done.wait(PROGRESS_PERIOD):
            with self._lock:
                now = time.monotonic()
                if self.last is None or now - self.last >= PROGRESS_PERIOD:
                    self._print(now)

    def _print(self, now: float) -> None:
        self.last = now
        print(f"{self.what}{': ' + self.text if self.text else ''} ({now - self.t0:.0f} s)", file=sys.stderr,
              flush=True)


def progress_bar(args, total: int, what: str):
    """Progress of counted work on stderr: a bar with the time spent on a terminal,
    else lines (_Lines); returns the context to run the work in and a callback
    step(done, total, name), whose total replaces `total` (the work may turn out
    smaller, e.g. fused layers)."""
    if not sys.stderr.isatty():
        lines = _Lines(what, f"0/{total}")
        return lines, lambda done, n, name: lines.report(f"{done}/{n} {name}", final=done == n)
    bar = Progress(*Progress.get_default_columns(), TimeElapsedColumn(), console=console(stderr=True),
                   transient=True)
    task = bar.add_task(what, total=total)
    return bar, lambda done, n, name: bar.update(task, completed=done, total=n, description=f"{what}: {name}")


@contextmanager
def stages(what: str) -> Iterator[Callable[[str], None]]:
    """Progress of work in stages on stderr: a spinner with the stage and the seconds
    spent on a terminal, else lines (_Lines); yields the callback step(stage)."""
    t0 = time.perf_counter()
    if not sys.stderr.isatty():
        with _Lines(what) as lines:
            yield lines.report
        return
    with console(stderr=True).status(what, spinner="dots") as status:
        yield lambda msg: status.update(f"{msg} ({time.perf_counter() - t0:.0f} s)")


def print_time(con, time: dict) -> None:
    """A run's time per inference (hwgen.clocks.Clock.time) as one line."""
    con.print(f"  {time['ms_per_inference']:g} ms per inference, {time['inferences_per_second']:g} inferences/s at "
              f"{time['clock_mhz']:g} MHz ({time['clock_source']})")
