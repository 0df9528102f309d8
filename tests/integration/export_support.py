"""Shared by the recipes' ``--export`` tests (a support module, not a test module): catching the
object a recipe trained while its ``main`` runs, checking that the exported file chooses what
the recipe's own evaluation player chooses on real observations, and that ``pisti-benchmark``
plays the file on the batched engine. Needs torch; only test modules that need it import this."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from pisti_env import Game, make_settings
from pisti_env.agents import SeatView, has_batched_form
from pisti_env.agents.exported import load_exported, read_contract
from training.benchmark.cli import main as benchmark_main

SETTINGS = dict(num_players=2, target=None)  # the recipes' game: 2-player single hands


def catch(monkeypatch: Any, module: Any, name: str, pick: Callable[[tuple, Any], Any]) -> list[Any]:
    """Wrap ``module.name`` (a function the recipe's ``main`` calls) so that each call appends
    ``pick(args, result)`` to the returned list: what the recipe trained, taken while it runs."""
    caught: list[Any] = []
    original = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        caught.append(pick(args, result))
        return result

    monkeypatch.setattr(module, name, wrapper)
    return caught


def decisions(player: Any, count: int = 300, seed: int = 0) -> tuple[list[int], torch.Tensor, torch.Tensor]:
    """``count`` decisions of random 2-player hands (every seat to move, R30: each seat's own
    view): ``player``'s action for each (as the harness asks it, ``act(SeatView)``) and the
    observations and masks ``pisti_v0`` gives there, as batched tensors."""
    rng = random.Random(seed)
    settings = make_settings(**SETTINGS)
    game, chosen, observations, masks = Game(settings, seed=seed), [], [], []
    while len(chosen) < count:
        if game.done:
            game = Game(settings, seed=rng.randrange(1 << 30))
        view = SeatView(game, game.turn)
        shown = view.observation()
        chosen.append(int(player.act(view)))
        observations.append(shown["observation"])
        masks.append(shown["action_mask"])
        game.step(rng.choice(view.legal_actions))
    return chosen, torch.tensor(np.stack(observations)), torch.tensor(np.stack(masks)) > 0


def assert_export_plays_as(path: Path, player: Any, name: str, recipe: str, out: Path) -> None:
    """The file at ``path`` is a pisti-export of the 2-player game named ``name``, made by
    ``recipe``, played by argmax; on real observations it chooses exactly what ``player`` (the
    recipe's own evaluation player, in memory) chooses, batched and one at a time; and
    ``pisti-benchmark FILE --task pisti-2p`` plays it on the batched engine."""
    contract = read_contract(str(path))
    assert contract["name"] == name and contract["play"] == "argmax"
    assert contract["source"]["recipe"] == recipe and contract["source"]["steps"] > 0
    assert contract["settings"] == make_settings(**SETTINGS).to_dict()
    exported = load_exported(path, settings=make_settings(**SETTINGS))
    assert has_batched_form(exported)

    chosen, observation, mask = decisions(player)
    actions = exported.act_batch(observation, mask)
    assert actions.tolist() == chosen
    assert mask.gather(1, actions[:, None]).all()  # legal, every one
    one_by_one = [exported.act({"observation": o.numpy(), "action_mask": m.numpy().astype(np.int8)})
                  for o, m in zip(observation[:20], mask[:20])]
    assert one_by_one == chosen[:20]

    assert benchmark_main([str(path), "--task", "pisti-2p", "--deals", "4", "--quiet", "--out", str(out)]) == 0
    report = json.loads((out / "benchmark.json").read_text())
    (task,) = report["tasks"]
    assert task["agent_name"] == str(path) and task["opponents"]  # the path given, not the file's own name
    assert {row["engine"] for row in task["opponents"]} == {"batched"}
