"""Playing a benchmark: an agent against a task's panel on the task's duplicate deals.

For each opponent of the panel, one [`training.harness.evaluate.evaluate`][training.harness.evaluate.evaluate] table: the agent
holds one seat (or one side with partnerships, R4) and the opponent every other, every deal
played once per seating (rotations with two sides, every order with three). A table plays on
the batched engine whenever every player at it has a batched form (``act_batch``) and the task
plays single hands, else on the Python engine; the report names the engine of each table. The
figures per opponent: the agent's mean score difference per hand (or match win rate) with its
95% interval, and its win rate; per task the panel mean and the anchored rating
(`training.benchmark.rating`). The task's whole deal set or its short one (the first
``short_count`` games, for slow agents: `training.benchmark.tasks`) are both comparable;
any other count or seed is a quick look without a rating.

The report names the agent by the spec or path the user gave (``agent``, ``agent_name``), never
by what a file says of itself. A failure of the agent while it plays (it raises, even
``SystemExit``, or chooses an illegal action) is an
[`AgentError`][training.benchmark.agents.AgentError] naming that spec.
"""

from __future__ import annotations

import os
import platform
import shlex
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from pisti_env import Settings
from pisti_env.agents import Player, make_player
from pisti_env.tools.versions import versions

from training.harness.batched_play import why_not_batched
from training.harness.duplicate import PlayerError, Table, make_seatings
from training.harness.evaluate import evaluate

from .agents import CODE_KINDS, TRUST_FLAG, AgentError, load_agent
from .rating import anchored_rating, panel_mean
from .tasks import ENV_VERSION, FULL, SHORT, SINGLE_HAND, Task, check_task, played_deal_set

AGENT = "agent"  # the agent's name at every table (never a panel spec)
REPORT_FORMAT = "pisti-benchmark-report"
REPORT_VERSION = 1


def _lineup(task: Task) -> list[str]:
    """The specs of one table's entries: the agent, then one opponent entry per other seat (one
    with two sides: the harness seats partners alike, R4)."""
    settings = task.game_settings
    others = 1 if settings.num_sides == 2 else settings.num_players - 1
    return [AGENT] + ["{opponent}"] * others


@dataclass(frozen=True)
class _Loader:
    """Builds a table's players by name in any process (worker processes unpickle it): the agent
    from its spec, an opponent from the registry."""

    spec: str
    opponent: str
    settings: Settings
    device: str
    trust_code: bool = False

    def __call__(self, name: str) -> Player:
        if name == AGENT:
            return load_agent(self.spec, self.settings, device=self.device, trust_code=self.trust_code)[1]
        return make_player(self.opponent, settings=self.settings, device=self.device)


def _engine(task: Task, specs: Sequence[str], players: Sequence[Player]) -> str:
    """``"batched"`` when the table can play there (every player has a batched form, single
    hands), else ``"python"``: one rule for every agent, so the panel plays alike for all."""
    if task.kind != SINGLE_HAND:
        return "python"
    settings = task.game_settings
    lineup = [pos % len(specs) for pos in range(settings.num_players)]
    table = Table(tuple(specs), make_seatings(lineup, settings), settings)
    return "batched" if why_not_batched(table, players) is None else "python"


def play_task(
    spec: str, task: Task, *, deal_set: str = FULL, count: int | None = None, seed: int | None = None,
    threads: int = 1, workers: int = 1, device: str = "cpu", progress: bool = False,
    log: Callable[[str], None] | None = None, trust_code: bool = False,
) -> dict[str, Any]:
    """The agent ``spec`` (any form of `training.benchmark.agents.load_agent`) against
    ``task``'s panel; returns the task's part of the report.

    ``deal_set``: ``"full"`` (the task's deal set) or ``"short"`` (its first ``short_count``
    games). ``count``/``seed``: play only the first ``count`` deals (or matches) of that set, or
    deals from another seed; the result is then marked ``comparable: false`` (no rating, no
    leaderboard). ``workers``: processes for the tables played on the Python engine (the
    figures do not depend on it). ``trust_code``: allow agents whose loading runs their own
    code (an SB3 zip, an RLlib checkpoint, a factory: `training.benchmark.agents.CODE_KINDS`).
    """
    check_task(task, deal_set)  # the environment version and the deal set, before anything is played
    settings = task.game_settings
    set_count, _ = task.deal_set(deal_set)
    count = set_count if count is None else count
    seed = task.seed if seed is None else seed
    comparable = count == set_count and seed == task.seed
    hand_settings = Settings(**{**settings.to_dict(), "target": None})
    kind, agent_player = load_agent(spec, settings, device=device, trust_code=trust_code)
    opponents = []
    start = time.perf_counter()
    for opponent in task.panel:
        loader = _Loader(spec, opponent, settings, device, trust_code)
        specs = [s.format(opponent=opponent) for s in _lineup(task)]
        players = [agent_player] + [make_player(opponent, settings=settings, device=device)] * (len(specs) - 1)
        engine = _engine(task, specs, players)
        t0 = time.perf_counter()
        game = {k: v for k, v in settings.to_dict().items() if k not in ("num_players", "partnerships", "target")}
        try:
            report = evaluate(
                specs, num_players=settings.num_players, partnerships=settings.partnerships,
                deals=count if task.kind == SINGLE_HAND else 0, matches=0 if task.kind == SINGLE_HAND else count,
                target=settings.target or 151, seed=seed, workers=workers, bootstrap=0, loader=loader, engine=engine,
                threads=threads, device=device, progress=progress, **game,
            )
        except PlayerError as error:  # the table's entry AGENT is the user's spec
            if error.player != AGENT:
                raise
            raise AgentError(f"agent {spec!r} {error.problem} (task {task.id}, against {opponent})") from error
        table = report["tables"][0]
        pair = next(p for p in table["pairs"] if p["a"] == AGENT and p["b"] == opponent)
        entry: dict[str, Any] = {"opponent": opponent, "engine": table["engine"] if task.kind == SINGLE_HAND else "python",
                                 "seatings": len(table["seatings"]), "seconds": time.perf_counter() - t0}
        if task.kind == SINGLE_HAND:
            entry["margin"] = pair["score_diff"]
            entry["win_rate"] = pair["hand_win_rate"]
            entry["hands"] = pair["hands"]
        else:
            entry["win_rate"] = pair["match_win_rate"]
            entry["matches"] = pair["matches"]
        entry["metric"] = entry["margin"] if task.metric == "score_diff" else entry["win_rate"]
        opponents.append(entry)
        if log is not None:
            log(f"{task.id}: {opponent}: {entry['metric']['mean']:+.3f} ± {entry['metric']['half_width']:.3f} "
                f"({entry['engine']}, {entry['seconds']:.1f} s)")
    panel = panel_mean([o["metric"]["mean"] for o in opponents], [o["metric"]["half_width"] for o in opponents])
    return {
        "task": task.to_dict(),
        "agent_kind": kind,
        "agent_name": spec,  # what the user gave: a file's metadata never names the row
        "deal_set": deal_set,
        "count": count,
        "seed": seed,
        "comparable": comparable,
        "opponents": opponents,
        "panel_mean": panel,
        "rating": anchored_rating(panel, task.anchors) if comparable else None,
        "seconds": time.perf_counter() - start,
        "hand_settings": hand_settings.to_dict(),
    }


def hardware(threads: int, device: str) -> dict[str, Any]:
    """What the figures' wall times were measured on."""
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    out: dict[str, Any] = {"cpu": cpu, "cpu_count": os.cpu_count(), "torch_threads": threads, "device": device,
                           "torch": torch.__version__}
    if device.startswith("cuda") and torch.cuda.is_available():
        out["gpu"] = torch.cuda.get_device_name(torch.device(device))
    return out


def command_for(spec: str, task: Task, deal_set: str = FULL, trust_code: bool = False) -> str:
    """The command that reproduces a task's figures for ``spec`` (quoted for a POSIX shell where
    it needs to be), with ``--trust-code`` when the agent's form needs it."""
    return (f"pisti-benchmark {shlex.quote(spec)} --task {task.name}"
            + (" --deal-set short" if deal_set == SHORT else "") + (f" {TRUST_FLAG}" if trust_code else ""))


def benchmark(
    spec: str, tasks: Sequence[Task], *, deal_set: str = FULL, count: int | None = None, seed: int | None = None,
    threads: int = 1, workers: int = 1, device: str = "cpu", progress: bool = False,
    exploit_budget: int | None = None, exploit_dir: str | None = None, made_with: str | None = None,
    display_name: str | None = None, log: Callable[[str], None] | None = None, trust_code: bool = False,
) -> dict[str, Any]:
    """The whole report for ``spec`` on ``tasks`` (see `play_task`); ``exploit_budget``:
    also train a best response of that many steps against the agent on each hand task
    (`training.exploit`, slow) and report its edge. ``made_with``: how the agent was made
    (a training command), kept in the report for the leaderboard; ``display_name``: the agent's
    short name there (else read from ``spec``,
    [display_name][training.benchmark.display_names.display_name])."""
    start = time.perf_counter()
    results = []
    for task in tasks:
        result = play_task(spec, task, deal_set=deal_set, count=count, seed=seed, threads=threads, workers=workers,
                           device=device, progress=progress, log=log, trust_code=trust_code)
        result["command"] = command_for(spec, task, deal_set, trust_code=result["agent_kind"] in CODE_KINDS)
        if exploit_budget:
            result["exploit"] = exploit_edge(spec, task, exploit_budget, threads, device,
                                             os.path.join(exploit_dir or "runs/benchmark", f"exploit-{task.name}"),
                                             progress)
        results.append(result)
    return {
        "format": REPORT_FORMAT,
        "format_version": REPORT_VERSION,
        "agent": spec,
        **({"made_with": made_with} if made_with else {}),
        **({"display_name": display_name} if display_name else {}),
        "tasks": results,
        "versions": {**versions(), "env_version": ENV_VERSION,
                     "tasks": {r["task"]["name"]: r["task"]["version"] for r in results},
                     "deal_sets": {r["task"]["name"]: played_deal_set(r)[1] for r in results}},
        "hardware": hardware(threads, device),
        "wall_seconds": time.perf_counter() - start,
    }


def exploit_edge(spec: str, task: Task, steps: int, threads: int, device: str, out_dir: str,
                 progress: bool) -> dict[str, Any]:
    """A best response of ``steps`` training steps against the agent (the trainer's PPO with the
    agent as the only opponent) and its edge on 2,000 duplicate deals; needs an agent the
    trainer's pool can seat (a registry spec or checkpoint directory) and a hand task."""
    if task.kind != SINGLE_HAND:
        raise ValueError(f"--exploit-budget needs a single-hand task, not {task.id} (matches)")
    from training.exploit.exploit import ExploitConfig, run

    config = ExploitConfig(target=spec, settings=Settings(**{**task.game_settings.to_dict(), "target": None}),
                           total_steps=steps, seed=task.seed, device=device, torch_threads=threads, curve_points=1,
                           out_dir=out_dir)
    report = run(config, progress=progress)
    return {"steps": report["budget"]["steps"], "edge": report["final_edge"],
            "train_seconds": report["budget"]["train_seconds"], "out_dir": out_dir}
