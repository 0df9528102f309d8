"""The benchmark's tasks: named, versioned game configurations with a fixed deal set and panel.

A `Task` fixes everything a published figure depends on: the game settings (RULES.md),
the table (how many seats the agent and each opponent hold), the seatings every deal is played
with (duplicate: the rotations with two sides, every order with three), the opponents of the
panel, how many deals (or matches) and the seed they are dealt from. The deal set is the list of
the first hands' (dealer, deck) of game ``0..count-1`` seeded as the harness seeds them
(`training.harness.duplicate.stream_seed`); its sha256 (`deal_set_hash`) is stored
with the task, and ``pisti-benchmark`` checks it before playing, so two people who report a task
at the same version played the same cards.

The short deal set. Search players (``pimc``, ``ismcts``) take about 0.5-2 s per hand on the
Python engine, so a task's whole set would take them a day or more. Each task therefore also
declares a *short deal set*: the first ``short_count`` games of its deal set, with their own
hash (``short_hash``). ``pisti-benchmark --deal-set short`` plays it; its figures are on the same
rating scale (the same anchors) with wider intervals, and the leaderboard lists them in their own
table under the task's, next to the reference agents' figures on the same short set. The short
set is part of the task: changing ``short_count`` is a version change like any other.

Versioning. A task's ``version`` goes up whenever its settings, panel, counts, seed, deal sets or
the environment version it needs (`ENV_VERSION`) change; a report names the task as
``name@version`` and ``pisti-benchmark`` refuses to put reports of different versions in one
table. `ENV_DIGESTS` records, per observation layout version (`pisti_env.OBS_VERSION`),
the digest of the environment's recorded outputs (``tests/data/env_digests.json``: observations,
masks and rewards of seeded games); a test fails when those outputs change while the version
stays, so a change of what agents see forces a new environment version and new task versions.

Rating anchors. Each task stores the panel-mean metric of ``random`` and ``greedy`` on it
(measured by ``pisti-benchmark random`` and ``pisti-benchmark greedy``, whose reports are kept in
``benchmarks/reports/``); `training.benchmark.rating.anchored_rating` maps any agent's
panel mean linearly so that ``random`` is 0 and ``greedy`` 1000.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from typing import Any, Mapping

from pisti_env import OBS_VERSION, Settings, make_settings
from pisti_env.game.deal import first_deal

# What a task needs of the environment: its name and observation layout version.
ENV_NAME = "pisti_v0"
ENV_VERSION = f"{ENV_NAME}/obs{OBS_VERSION}"
# sha256 of tests/data/env_digests.json (canonical JSON) per environment version; see the module
# docstring. A new entry goes here with every OBS_VERSION bump.
ENV_DIGESTS = {
    "pisti_v0/obs1": "e57df8ce355ad1e593f96fcd2e3756673204ba0252cbca1bdceb4706632edd47",
}

SINGLE_HAND, WHOLE_MATCH = "hand", "match"
FULL, SHORT = "full", "short"
DEAL_SETS = (FULL, SHORT)
# Seed streams of the harness (training.harness.duplicate.DEAL / WHOLE_MATCH).
STREAMS = {SINGLE_HAND: 0, WHOLE_MATCH: 1}


@dataclass(frozen=True)
class Task:
    """One benchmark task.

    Attributes:
        name: the task's id (``pisti-2p``).
        version: bumped on any change of what is played (see the module docstring).
        description: one line for the docs and the report.
        settings: keyword settings of [`pisti_env.make_settings`][pisti_env.rules.make_settings] (``target`` ``None``:
            single hands; a number: matches to it).
        panel: the opponents' player specs (built by [`pisti_env.agents.make_player`][pisti_env.agents.make_player]).
        count: duplicate deals (hand tasks) or duplicate matches (match tasks) per opponent.
        seed: the master seed of the deal set.
        deal_hash: sha256 of the deal set (`deal_set_hash`).
        env_version: the environment version the task was defined on (`ENV_VERSION`).
        anchors: panel-mean metric of ``random`` and ``greedy`` (the rating's 0 and 1000).
        short_count: games in the short deal set (the first ``short_count`` of the deal set).
        short_hash: sha256 of the short deal set (`deal_set_hash` of its games).
    """

    name: str
    version: int
    description: str
    settings: dict[str, Any]
    panel: tuple[str, ...]
    count: int
    seed: int
    deal_hash: str
    env_version: str = ENV_VERSION
    anchors: dict[str, float] = field(default_factory=dict)
    short_count: int = 0
    short_hash: str = ""

    @property
    def id(self) -> str:
        """``name@version``, how reports and tables name the task."""
        return f"{self.name}@{self.version}"

    @property
    def kind(self) -> str:
        """``"hand"`` (single hands, margin in points per hand) or ``"match"`` (matches)."""
        return SINGLE_HAND if self.settings.get("target") is None else WHOLE_MATCH

    @property
    def game_settings(self) -> Settings:
        return make_settings(**self.settings)

    @property
    def metric(self) -> str:
        """The per-opponent figure the rating averages: ``score_diff`` (points per hand) for
        hand tasks, ``match_win_rate`` for match tasks."""
        return "score_diff" if self.kind == SINGLE_HAND else "match_win_rate"

    def deal_set(self, which: str = FULL) -> tuple[int, str]:
        """``(count, hash)`` of the ``"full"`` or ``"short"`` deal set; ``ValueError`` for another."""
        if which == FULL:
            return self.count, self.deal_hash
        if which == SHORT:
            return self.short_count, self.short_hash
        raise ValueError(f"deal set must be one of {DEAL_SETS}, got {which!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "id": self.id, "description": self.description,
                "settings": self.game_settings.to_dict(), "panel": list(self.panel), "kind": self.kind,
                "count": self.count, "seed": self.seed, "deal_hash": self.deal_hash, "env_version": self.env_version,
                "metric": self.metric, "anchors": dict(self.anchors), "short_count": self.short_count,
                "short_hash": self.short_hash}


def deal_set_hash(settings: Settings, seed: int, count: int, kind: str = SINGLE_HAND) -> str:
    """sha256 of the deal set: for game ``i < count`` its seed (as the harness derives it),
    its first dealer and deck, in order."""
    from training.harness.duplicate import stream_seed

    digest = hashlib.sha256(f"{ENV_NAME}|{settings.num_players}|{settings.decks}|{kind}".encode())
    for i in range(count):
        game_seed = stream_seed(seed, STREAMS[kind], i)
        dealer, deck = first_deal(settings, game_seed)
        digest.update(struct.pack(f"<qB{len(deck)}B", game_seed, dealer, *deck))
    return digest.hexdigest()


def played_deal_set(result: Mapping[str, Any]) -> tuple[str, str | None]:
    """``(which, hash)``: the deal set a report's task result was played on (``"full"`` for a
    report made before short sets existed) and that set's hash as the report recorded it."""
    which = result.get("deal_set", FULL)
    return which, result["task"].get("deal_hash" if which == FULL else "short_hash")


def check_task(task: Task, which: str = FULL) -> None:
    """``ValueError`` unless ``task`` can be played by this package as it was defined: the
    environment version it needs is this one's, and its deal set ``which`` (``"full"`` or
    ``"short"``) hashes as recorded."""
    if task.env_version != ENV_VERSION:
        raise ValueError(f"task {task.id} was defined on {task.env_version}, this package is {ENV_VERSION}: "
                         "use the package version the task names, or a newer version of the task")
    count, recorded = task.deal_set(which)
    got = deal_set_hash(task.game_settings, task.seed, count, task.kind)
    if got != recorded:
        raise ValueError(f"task {task.id}: the {which} deal set hashes to {got}, the task records {recorded}: "
                         "the deals changed, so the task's version must change")


_2P = dict(num_players=2, target=None)
SHORT_MATCHES = 20  # the match task's short set: a match is some ten hands, so fewer games
TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        Task("pisti-2p", 1, "2 players, single hands, default rules",
             _2P, ("random", "greedy", "expert", "pisti-2p"), 10_000, 40_001,
             "2715d876b685f240f4d84057496b2b82d6dadf2dc6135a7960cb10531ce7e304",
             anchors={"random": -9.0941625, "greedy": 0.28495000000000004},
             short_count=200, short_hash="d17dacc600f95765c708b90da267cdb008e58d697227f3601db74decacf0dd86"),
        Task("pisti-2p-match", 1, "2 players, matches to 151 (R24), default rules",
             dict(num_players=2, target=151), ("random", "greedy", "expert", "pisti-2p"), 200, 40_002,
             "407f514350637cfa4cd231107380f7c2d1805964f517f21f7481e6fb87d6bef6",
             anchors={"random": 0.12625, "greedy": 0.453125},
             short_count=SHORT_MATCHES, short_hash="48e6a6b7a036b768f9362449a620d17e5d82683c6e157705dff47d45ac9d1f72"),
        Task("pisti-4p-partners", 1, "4 players in partnerships (R4), single hands; the agent holds one side",
             dict(num_players=4, partnerships=True, target=None), ("random", "greedy", "expert", "pisti-4p"),
             4_000, 40_003,
             "0e122d5853538b895f6400563762a0b3e49e76785a896991533dd88545427944",
             anchors={"random": -9.66178125, "greedy": 0.10949999999999993},
             short_count=200, short_hash="3f40272066b560dcf79b6b5c5f86597b04569e0ff6a589d6e91b3a2bafdd5402"),
        Task("pisti-3p", 1, "3 players, single hands; the agent against two copies of each opponent "
             "(no shipped 3-player policy)", dict(num_players=3, target=None), ("random", "greedy", "expert"),
             3_000, 40_004,
             "b35b1a138f285d4d96f37cdb4c538b118372c3fdd6ddc12b837c479a44add097",
             anchors={"random": -3.229888888888889, "greedy": 0.8156481481481482},
             short_count=100, short_hash="26a9d83176bb9ed2f3b01d70e68fa6698cf8d2536dcaabe3d8f0623399bfe88d"),
        Task("pisti-bluff-2p", 1, "2 players, single hands, the bluff variant (R29)",
             dict(num_players=2, target=None, bluff=True), ("random", "greedy", "expert", "pisti-bluff"),
             2_000, 40_005,
             "76c94cbd53c490ca88d0a3cdce46346e89492a39469655fa3fb41652495eeb5f",
             anchors={"random": -16.5745, "greedy": -2.400875},
             short_count=200, short_hash="330b30cfa86e77bd26cbacbfa29d1584e58b6075ee61ff2270c02492e3bf4477"),
    )
}


def task_names() -> list[str]:
    return list(TASKS)


def versioned(name: str, registry: Mapping[str, Any], kind: str = "task") -> Any:
    """The entry of ``registry`` named ``name`` (``name@version`` also accepted, and checked
    against the entry's ``version``); ``ValueError`` naming the ``kind``'s entries for another.
    One rule for the benchmark's tasks and the learning tasks."""
    base, at, version = name.partition("@")
    if base not in registry:
        raise ValueError(f"unknown {kind} {name!r}; {kind}s are {list(registry)}")
    entry = registry[base]
    if at and version != str(entry.version):
        raise ValueError(f"{kind} {base} is at version {entry.version} in this package, not {version!r}")
    return entry


def get_task(name: str) -> Task:
    """The task named ``name`` (``name@version`` also accepted, and checked); ``ValueError``
    naming the tasks for another."""
    return versioned(name, TASKS)
