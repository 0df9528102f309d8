"""The learning protocol: what a learning task fixes, so that two results files of one task
compare learning algorithms and nothing else.

A [LearningTask][training.learning.protocol.LearningTask] names a benchmark task (the game, its
panel, its deal set and its anchored rating: [training.benchmark.tasks][]), the training
budgets in environment steps, the seeds whose results are reported (and, apart from them, the
seeds an algorithm may be tuned on), and the evaluation points along training: ``points``
snapshots evenly spaced over the budget, the first ``points - 1`` each rated on the *curve deal
set* (the first ``curve_count`` deals of the task's deal set, with their own sha256, checked
before any game is played), the last on the task's whole deal set: the run's reported rating,
exactly what ``pisti-benchmark`` gives the final policy.

Versioning works as for the benchmark's tasks: the learning task's ``version`` goes up whenever
its game task's version, budgets, seeds, points or curve deal set change; results files name
the task as ``name@version`` and the aggregation refuses to mix versions.

A step is one decision in the training games (a card played, by any seat); in self-play every
one is the learner's. Each algorithm's page says how it counts them (PPO's pool opponents'
moves count too, though it does not learn from them).
"""

from __future__ import annotations

from dataclasses import dataclass

from training.benchmark.tasks import FULL, Task, check_task, deal_set_hash, get_task, versioned

STANDARD, LONG = "standard", "long"


@dataclass(frozen=True)
class LearningTask:
    """One learning task (see the module docstring).

    Attributes:
        name: the task's id; the benchmark task it trains for has the same name.
        version: bumped on any change of what is trained or rated.
        game: the benchmark task whose game, panel, deal set and anchors the runs are rated on.
        budgets: environment steps per run: ``standard`` (one PPO seed in about 10 minutes on
            two CPU cores) and ``long`` (for bigger machines).
        seeds: the seeds whose results are reported.
        tuning_seeds: the seeds an algorithm's hyperparameters may be tuned on, never reported.
        points: evaluation points along training, evenly spaced; the last is the end.
        curve_count: duplicate deals per opponent at the points before the last.
        curve_hash: sha256 of that curve deal set (`training.benchmark.tasks.deal_set_hash`).
    """

    name: str
    version: int
    game: Task
    budgets: dict[str, int]
    seeds: tuple[int, ...]
    tuning_seeds: tuple[int, ...]
    points: int
    curve_count: int
    curve_hash: str

    @property
    def id(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def task(self) -> Task:
        """The benchmark task whose game, panel and rating the runs are measured on."""
        return self.game

    def budget_steps(self, budget: str | int) -> int:
        """The steps of a named budget, or a number of steps as given (a custom budget, whose
        results are marked as such)."""
        if isinstance(budget, int) and not isinstance(budget, bool):
            if budget < self.points:
                raise ValueError(f"a budget needs at least {self.points} steps (one per evaluation point), got {budget}")
            return budget
        if budget not in self.budgets:
            raise ValueError(f"unknown budget {budget!r}; {self.id} has {sorted(self.budgets)} (or a number of steps)")
        return self.budgets[budget]

    def evaluation_steps(self, budget_steps: int) -> list[int]:
        """The steps at which snapshots are taken: ``k * budget / points`` for ``k = 1..points``."""
        return [budget_steps * k // self.points for k in range(1, self.points + 1)]

    def check(self) -> None:
        """``ValueError`` unless the game task and the curve deal set are as recorded."""
        task = self.task
        check_task(task, FULL)
        got = deal_set_hash(task.game_settings, task.seed, self.curve_count, task.kind)
        if got != self.curve_hash:
            raise ValueError(f"learning task {self.id}: the curve deal set hashes to {got}, the task records "
                             f"{self.curve_hash}: the deals changed, so the task's version must change")

    def to_dict(self) -> dict:
        return {"name": self.name, "version": self.version, "id": self.id, "game_task": self.task.id,
                "budgets": dict(self.budgets), "seeds": list(self.seeds), "tuning_seeds": list(self.tuning_seeds),
                "points": self.points, "curve_count": self.curve_count, "curve_hash": self.curve_hash}


REPORTED_SEEDS = (0, 1, 2, 3, 4)
TUNING_SEEDS = tuple(range(1000, 1010))
LEARNING_TASKS: dict[str, LearningTask] = {
    t.name: t
    for t in (
        LearningTask("pisti-2p", 1, get_task("pisti-2p"), {STANDARD: 5_000_000, LONG: 100_000_000}, REPORTED_SEEDS, TUNING_SEEDS, 8, 1000,
                     "54766f7bf4c1d5ff68fe36ea994f1ebd8412e1d0f553ac7efec90bd631111645"),
        LearningTask("pisti-4p-partners", 1, get_task("pisti-4p-partners"), {STANDARD: 5_000_000, LONG: 100_000_000}, REPORTED_SEEDS, TUNING_SEEDS,
                     8, 1000, "a1e5ffd6a6b98862fb95aabef3da419621e35a458b07b22ca269220ffed3c730"),
    )
}


def get_learning_task(name: str) -> LearningTask:
    """The learning task ``name`` (``name@version`` also accepted and checked); ``ValueError``
    naming the learning tasks for another."""
    return versioned(name, LEARNING_TASKS, "learning task")
