"""A trained player's margin over the baselines: the figure every recipe in ``examples/`` reports."""

from __future__ import annotations

from typing import Any, Sequence

from pisti_env import make_settings
from pisti_env.agents import Player, make_player


BASELINES = ("random", "greedy")


def baseline_margins(
    player: Player | str,
    *,
    baselines: Sequence[str] = BASELINES,
    deals: int = 2000,
    seed: int = 0,
    label: str = "trained",
    ray: str | None = None,
    engine: str = "auto",
    progress: bool = False,
    **settings: Any,
) -> dict[str, dict[str, float]]:
    """A trained player's margin over each baseline: its mean score difference per hand, with
    the 95% interval, on ``deals`` duplicate single-hand deals (each deal played from every
    seating), one [`evaluate`][training.harness.evaluate.evaluate] table per baseline. The player holds one seat, or one side
    with two sides (2 players, or 4 in partnerships, R4); the baseline holds every other.

    This is the figure every recipe in ``examples/`` reports, and ``pisti-exploit``'s edge.
    ``player`` is a player spec (``"ismcts:n=100"``, a checkpoint path) or an object (a
    library's model wrapped as a [`Player`][pisti_env.agents.base.Player]), which sits at the table
    under ``label``; neither may be a baseline's spec. ``settings`` are the game's
    (``num_players``, ``partnerships``, variants; single hands, so ``target`` may only be
    ``None``). Returns ``{baseline: score_diff}`` with the keys of the report's ``score_diff``
    (``mean``, ``half_width``, …), from ``player``'s side. ``ray``: play on Ray at this
    address (see [`evaluate`][training.harness.evaluate.evaluate]); a player object then travels by Ray's own serialisation.
    ``engine``: see [`evaluate`][training.harness.evaluate.evaluate] (a player object with ``act_batch`` plays on the batched
    engine by default). ``progress``: a progress bar with the time left on stderr, per baseline
    (for a slow player: ``examples/openspiel_ismcts.py``'s IS-MCTS takes minutes).
    """
    if isinstance(player, str):
        label = player
    elif not isinstance(player, Player):
        raise TypeError(f"player must be a player spec or a Player (reset/act), got {type(player).__name__}")
    if label in baselines:
        raise ValueError(f"{label!r} is also a baseline's spec: pick another label")
    if settings.pop("target", None) is not None:
        raise ValueError("baseline_margins plays single hands: target must be None (or left out)")
    hand_settings = make_settings(target=None, **settings)
    others = 1 if hand_settings.num_sides == 2 else hand_settings.num_players - 1

    def loader(spec: str) -> Player:
        if spec == label and not isinstance(player, str):
            return player
        return make_player(spec, settings=hand_settings)

    margins = {}
    for baseline in baselines:
        from .evaluate import evaluate  # evaluate re-exports this module's names

        report = evaluate([label] + [baseline] * others, deals=deals, matches=0, seed=seed, bootstrap=0,
                          loader=loader, ray=ray, engine=engine, progress=progress, **settings)
        pair = next((p for p in report["tables"][0]["pairs"] if (p["a"], p["b"]) == (label, baseline)), None)
        if pair is None:
            raise RuntimeError(f"no {label!r} vs {baseline!r} pair in the report")
        margins[baseline] = pair["score_diff"]
    return margins
