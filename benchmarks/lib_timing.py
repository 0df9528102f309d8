"""The library benchmarks' (``bench_lib_*.py``) one timer: the seconds spent inside an env's
methods, so that a run can split its wall clock between our env and the library around it."""

from __future__ import annotations

import functools
import time
from typing import Any, Callable


class Stopwatch:
    """Adds up the seconds spent in the calls it times (``seconds``; set it to 0 to restart)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def call(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``method(*args, **kwargs)``, timed."""
        start = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start

    def wrap(self, method: Callable[..., Any]) -> Callable[..., Any]:
        """``method``, timed at every call."""
        return functools.wraps(method)(functools.partial(self.call, method))

    def patch(self, obj: Any, *names: str) -> None:
        """Time the methods ``names`` of the object ``obj`` (its bound methods are replaced on
        the instance, so every caller, wrappers included, goes through the timer)."""
        for name in names:
            setattr(obj, name, self.wrap(getattr(obj, name)))
