"""Shared by the R29 research tests (tests/bluff/): bluff-variant positions of random play and
the tiny bluff-variant training run. The ``headless`` fixture (a policy without heads) is in
this folder's ``conftest.py``."""

from __future__ import annotations

import random
from pathlib import Path

from pisti_env import Game, make_settings
from pisti_env.rules.actions import BELIEVE, FACE_DOWN
from pisti_env.views.observation import ObservationEncoder

from helpers import tiny_config

BLUFF = make_settings(num_players=2, bluff=True, target=None)


def random_positions(count: int, settings, seed: int, keep, claim_share: float | None) -> list[tuple[Game, int, object, list[int]]]:
    """(game, seat to move, its observation, legal actions) at the first ``count`` positions of
    random play that ``keep(game, legal)`` selects. Play picks a claim (a face-down card, R29)
    with probability ``claim_share`` where one is legal, else any legal action (``None``: any
    legal action, uniformly)."""
    encoder = ObservationEncoder(settings)
    rng = random.Random(seed)
    found, game_seed = [], seed
    while len(found) < count:
        game = Game(settings, seed=game_seed)
        game_seed += 1
        while not game.done:
            legal = game.legal_actions()
            if keep(game, legal):
                found.append((game.clone(), game.turn, encoder.encode(game, game.turn), legal))
            claims = [a for a in legal if FACE_DOWN <= a < BELIEVE]
            claim = claim_share is not None and claims and rng.random() < claim_share
            game.step(rng.choice(claims) if claim else rng.choice(legal))
    return found[:count]


def answering_positions(count: int, seed: int = 0) -> list[tuple[Game, "object"]]:
    """(game, answerer's observation) at ``count`` pending claims of random bluff-variant play
    that claims whenever it may (80% of its chances)."""
    return [(game, obs) for game, _, obs, _ in
            random_positions(count, BLUFF, seed, lambda game, legal: game.claimant >= 0, claim_share=0.8)]


def claim_chances(count: int, seed: int = 0, settings=BLUFF) -> list[tuple[Game, "object", list[int]]]:
    """(game, observation of the seat to move, legal actions) at ``count`` claim chances
    (R29: face-down plays legal) of random play."""
    return [(game, obs, legal) for game, _, obs, legal in
            random_positions(count, settings, seed, lambda game, legal: any(FACE_DOWN <= a < BELIEVE for a in legal),
                             claim_share=None)]


def train_bluff(tmp_path: Path, name: str, **overrides):
    """A tiny bluff-variant self-play run into ``tmp_path / name`` (fp32, snapshots every update)."""
    from training.trainer.runner import run

    config = tiny_config(tmp_path, bluff=True, target=None, self_play_share=0.5, snapshot_every=1,
                         precision="fp32", out_dir=str(tmp_path / name), **overrides)
    return run(config, progress=False)
