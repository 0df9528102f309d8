"""The benchmark: named, versioned tasks with fixed deal sets (:mod:`.tasks`), ``pisti-benchmark``
(:mod:`.cli`, :mod:`.run`), the anchored rating (:mod:`.rating`), agents from anywhere
(:mod:`.agents`), ``pisti-export`` (:mod:`.export`) and the leaderboard (:mod:`.leaderboard`).
See ``docs/benchmark.md``."""
