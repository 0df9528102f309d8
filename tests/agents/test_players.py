"""The one player protocol: scripted players, checkpoints, search rollouts and the trainer's
pool opponents are all ``Player``s built by one registry; the harness needs no torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pisti_env
from pisti_env.agents import BatchedPlayer, Player, SeatView, has_batched_form, make_player
from pisti_env.agents.pimc import GreedyRollout, PimcAgent

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT = ROOT / "checkpoints" / "pisti-2p"


def test_the_harness_and_the_scripted_players_import_no_torch():
    """Importing pisti_env and training.harness and a baseline-only evaluation leave torch out."""
    code = (
        "import sys, pisti_env, pisti_env.agents, training, training.harness\n"
        "from training.harness.evaluate import evaluate\n"
        "from training.harness.bluff_stats import bluff_statistics\n"
        "evaluate(['greedy', 'random'], deals=3, matches=1, target=31, bootstrap=0)\n"
        "bluff_statistics(['greedy', 'random'], deals=2)\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)


def test_every_kind_of_player_follows_the_protocol():
    settings = pisti_env.make_settings(num_players=2, target=None)
    players = {spec: make_player(spec, seed=0, settings=settings) for spec in ("random", "greedy", "expert", "pimc:n=2")}
    players["checkpoint"] = make_player(str(CHECKPOINT), seed=0, settings=settings)
    players["rollout"] = GreedyRollout(seed=0)
    for spec, player in players.items():
        assert isinstance(player, Player) and isinstance(player.name, str), spec
    batched = {spec for spec, p in players.items() if has_batched_form(p)}
    assert batched == {"random", "greedy", "expert", "checkpoint"}
    assert all(isinstance(players[spec], BatchedPlayer) for spec in batched)


def test_a_checkpoint_acts_alike_on_a_view_an_observation_dict_and_a_batch():
    import torch

    settings = pisti_env.make_settings(num_players=2, target=151)
    player = make_player(str(CHECKPOINT), settings=settings)
    encoder = pisti_env.ObservationEncoder(settings)
    game = pisti_env.Game(settings, seed=3)
    observations, masks, chosen = [], [], []
    while game.hands_completed == 0:
        view = SeatView(game, game.turn)
        action = player.act(view)
        assert action == player.act(view.observation()) and action in view.legal_actions
        observations.append(encoder.encode(game, game.turn))
        mask = np.zeros(settings.num_actions, dtype=bool)
        mask[view.legal_actions] = True
        masks.append(mask)
        chosen.append(action)
        game.step(action)
    batch = player.act_batch(torch.from_numpy(np.stack(observations)), torch.from_numpy(np.stack(masks)),
                             torch.Generator())
    assert batch.tolist() == chosen


def test_the_registry_refuses_a_checkpoint_for_another_game_and_options_on_a_path():
    from pisti_env.policies.metadata import CheckpointError

    with pytest.raises(CheckpointError, match="other game settings"):
        make_player(str(CHECKPOINT), settings=pisti_env.make_settings(num_players=2, bluff=True))
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['n'\].*allowed: \['play'\]"):
        make_player(str(CHECKPOINT), n=3)
    make_player(str(CHECKPOINT), settings=pisti_env.make_settings(num_players=2, target=51))  # match context only


def test_batched_greedy_needs_the_settings():
    import torch

    with pytest.raises(ValueError, match="settings"):
        make_player("greedy").act_batch(torch.zeros(1, 1), torch.ones(1, 52, dtype=torch.bool), torch.Generator())


def test_pimc_takes_any_player_as_its_rollout():
    """R29-free 2-player hand: a pimc with an explicit rollout player plays like one given the
    rollout's name (same seeds, same rollout player)."""
    settings = pisti_env.make_settings(num_players=2, target=None)
    named, given = PimcAgent(seed=4, n=3, rollout="greedy"), PimcAgent(seed=4, n=3, rollout=GreedyRollout())
    game = pisti_env.Game(settings, seed=1)
    while not game.done:
        view = SeatView(game, game.turn)
        action = named.act(view)
        assert given.act(view) == action
        game.step(action)
    with pytest.raises(TypeError, match="player"):
        PimcAgent(rollout=lambda game, rng: 0)


@pytest.mark.parametrize("rollout", ["random", "greedy"])
def test_R31_rollout_players_that_read_the_whole_world_refuse_a_real_games_view(rollout):
    """The random and greedy rollout players read every card of pimc's own sampled worlds; on
    the view of a real game that would leak hidden cards (R31), so they refuse it."""
    from pisti_env.agents.pimc import ROLLOUT_PLAYERS, WorldView

    game = pisti_env.Game(pisti_env.make_settings(num_players=2, target=None), seed=3)
    player = ROLLOUT_PLAYERS[rollout]()
    with pytest.raises(TypeError, match="WorldView"):
        player.act(SeatView(game, game.turn))
    world = SeatView(game, game.turn).determinize(5)
    assert player.act(WorldView(world, world.turn)) in world.legal_actions()


# ------------------------------------------------------------------ the names the docs use
def test_the_documented_player_names_import_from_pisti_env_itself():
    """README and docs write `pisti_env.make_player("pisti-2p")` and `from pisti_env import SeatView`."""
    import pisti_env.agents as agents

    for name in ("make_player", "agent_names", "Player", "BatchedPlayer", "SeatView", "view_for_agent"):
        assert getattr(pisti_env, name) is getattr(agents, name) and name in pisti_env.__all__, name
    assert pisti_env.SHIPPED_POLICIES == ("pisti-2p", "pisti-4p", "pisti-bluff")


@pytest.mark.parametrize("name", ["pisti-2p", "pisti-4p", "pisti-bluff"])
def test_a_shipped_policy_is_named_after_itself(name):
    """Its metadata still says "policy" (the folder it was saved in); the player takes the name
    it is known by, loaded by name or by its path in a checkout."""
    by_name = pisti_env.make_player(name)
    by_path = pisti_env.make_player(str(ROOT / "checkpoints" / name) + "/")
    assert by_name.name == by_path.name == name and by_name.metadata["name"] == "policy"
    assert repr(by_name).startswith(f"CheckpointPlayer({name!r}")


def test_a_checkpoint_object_keeps_the_name_it_is_given():
    from pisti_env.policies.player import CheckpointPlayer

    shipped = make_player("pisti-2p")
    assert CheckpointPlayer(shipped.network, shipped.metadata).name == "policy"  # the metadata's, as before
    assert CheckpointPlayer(shipped.network, shipped.metadata, name="learner").name == "learner"


def test_the_seat_view_docstring_lists_every_public_member():
    """SeatView's docstring is the API page's summary of what a player may read: a member added
    without a line there fails here."""
    import re

    listed = set(re.findall(r"`([a-z_]+)(?:\(|`)", SeatView.__doc__.split("Attributes, not methods")[0]))
    public = {name for name in dir(SeatView) if not name.startswith("_")}
    assert public <= listed, sorted(public - listed)
    game = pisti_env.new_game(seed=3)
    assert SeatView(game, game.turn).legal_actions == game.legal_actions()  # the view's attribute, the game's method
