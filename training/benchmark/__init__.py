"""The benchmark: named, versioned tasks with fixed deal sets (`.tasks`), ``pisti-benchmark``
(`.cli`, `.run`), the anchored rating (`.rating`), agents from anywhere
(`.agents`), ``pisti-export`` (`.export`) and the leaderboard (`.leaderboard`).
See ``docs/benchmark.md``."""
