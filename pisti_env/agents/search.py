"""``search``: one step of policy improvement by rollouts on the batched engine (issue 49).

At each decision with two or more legal cards the player

1. deals ``worlds`` worlds consistent with what its seat knows (`SeatView.determinize`,
   R31: other hands, the stock, never-turned table cards and hidden captures dealt again);
2. plays every legal card in every world and rolls the hand out to its end with the policy
   (its most likely legal action, argmax) at every seat, each seat reading only its own
   observation of the world: all worlds x cards as one batch of the batched engine
   (`pisti_env.batched`; rows built by `pisti_env.batched.from_game.from_games`),
   the policy's network on the whole batch at each step;
3. values each (world, card) by the hand's score difference: its side's total minus the mean
   of the other sides' (R22);
4. keeps the policy's own choice ``a*`` unless the evidence says another card is better
   (`decide`): with the per-world paired differences ``d_w = v_w(a) - v_w(a*)`` (common
   random numbers: the same world, and the same deterministic continuation, for every card;
   the policy's own value in each world serves as the control variate), a card ``a`` replaces
   ``a*`` only if ``mean(d) - z * se(d) > margin``; among such cards the best mean wins (ties:
   the lowest card id). So with few worlds it plays like the policy, and with many it plays
   the rollouts' best card where they tell it apart.

Reproducible: each decision's worlds and draws come from a generator seeded by the player's
seed and the seat's observation (what it knows, R30), so the same seed and the same
knowledge give the same choice, whatever the hidden cards really are.

It reads only its `SeatView` (R30-R31): the observation, the legal actions and the
view's own determinizations. torch and the policy are imported on first use (``import
pisti_env`` stays torch-free); a checkpoint policy is loaded through the registry
(``pisti_env.policies.loader``), as for any checkpoint spec.

Games: 2, 3 and 4 players, partnerships, matches (each decision values the hand in
progress), one deck (the batched engine's). The bluff variant (R29) is refused: the rollouts'
argmax would never bluff or challenge and a determinization cannot tell how a claimant bluffs.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..game.engine import Game
from ..rules.settings import Settings
from .base import Agent, Player, has_batched_form
from ..views.view import SeatView

if TYPE_CHECKING:
    import torch

# The default setting: the worlds a decision samples, and the evidence a card needs to replace
# the policy's (docs/players.md, "search"; measured in docs/performance.md).
DEFAULT_WORLDS = 128
DEFAULT_Z = 2.0
DEFAULT_MARGIN = 0.0
# The game fields that a policy must have been trained for (the match context may differ).
_MATCH_CONTEXT = ("target", "win_margin")
# Rollout policies by (spec, settings, device), loaded once a process: the rollouts draw from
# the generator they are given (a checkpoint's argmax draws nothing), so players can share them.
_POLICIES: dict[tuple[str, Settings, str], Any] = {}


def decide(values: np.ndarray, base: int, z: float = DEFAULT_Z, margin: float = DEFAULT_MARGIN) -> int:
    """The column of ``values`` to play: ``base`` (the policy's choice) unless another column
    is better on the evidence.

    Args:
        values: (worlds, actions) the value of each action in each world (the same worlds for
            every action: paired).
        base: the column of the policy's own choice.
        z: how many standard errors the paired mean difference must clear.
        margin: the points a hand (score difference) it must clear besides.

    Returns: the column ``a`` with the best mean among those whose paired differences
    ``d = values[:, a] - values[:, base]`` have ``mean(d) - z * se(d) > margin`` (ties: the
    lowest column), or ``base`` when none has. One world is taken as the truth (``se`` 0): the
    caller knows it is the only one (every card open).
    """
    W = values.shape[0]
    d = values - values[:, base : base + 1]
    mean = d.mean(0)
    se = d.std(0, ddof=1) / math.sqrt(W) if W > 1 else np.zeros_like(mean)
    passes = mean - z * se > margin
    passes[base] = False
    if not passes.any():
        return base
    best = np.where(passes, mean, -np.inf)
    return int(np.flatnonzero(best == best.max())[0])


def rollout_totals(
    engine: Any, buffer: "torch.Tensor", policy: Any, state: Any, actions: "torch.Tensor", generator: "torch.Generator"
) -> "torch.Tensor":
    """(rows, sides) each row's hand totals (R22) once every row of ``state`` plays ``actions``
    and then ``policy`` (``act_batch``) plays every seat to the hand's end, each seat reading
    its own observation: the rollouts of `SearchAgent` and of the search-target generator
    (`training.distill`). Rows without claims (R29) move in lockstep, so all end together.

    Args:
        engine: a `pisti_env.batched.BatchedPisti` of ``state``'s batch size; ``buffer``
            its observation buffer.
        policy: the player at every seat (``act_batch(observation, mask, generator)``).
        state: the rows (a batched engine state), each in a hand in progress.
        actions: (rows,) the first action of each row, legal there.
        generator: the policy's draws (none for a checkpoint's argmax).
    """
    import torch

    rows = actions.shape[0]
    totals = torch.zeros(rows, engine.num_sides, dtype=torch.int64, device=engine.device)
    ended = torch.zeros(rows, dtype=torch.bool, device=engine.device)
    while True:
        state, out = engine.step_state(state, actions, buffer)
        new = out.hand_over & ~ended
        if bool(new.any()):
            totals = torch.where(new[:, None], out.hand_result["total"], totals)
            ended = ended | new
            if bool(ended.all()):
                return totals
        mask = out.action_mask
        if bool((mask.sum(1) == 1).all()):
            # Every row's mover holds one card (a round's last cards, R18): no forward pass,
            # about a quarter of the steps with 2 players.
            actions = mask.to(torch.uint8).argmax(1)
        else:
            actions = policy.act_batch(out.observation, mask, generator)


def default_policy(settings: Settings) -> str:
    """The rollout policy for ``settings``: the shipped policy trained for that game
    (``pisti-2p``, ``pisti-4p``; the match context aside), else ``expert`` where it has a
    batched form, else ``greedy``."""
    from .registry import SHIPPED_POLICIES, make_player, shipped_policy_path  # the registry imports this module

    wanted = {k: v for k, v in settings.to_dict().items() if k not in _MATCH_CONTEXT}
    for name in SHIPPED_POLICIES:
        with open(os.path.join(shipped_policy_path(name), "metadata.json"), encoding="utf-8") as f:
            trained = json.load(f).get("settings", {})
        if {k: trained.get(k) for k in wanted} == wanted:
            return name
    return "expert" if has_batched_form(make_player("expert", settings=settings)) else "greedy"


class SearchAgent(Agent):
    """Rollout search over sampled worlds on the batched engine, improving on a policy (see
    the module docstring).

    Args:
        seed: seeds each decision's worlds together with the seat's observation.
        worlds: worlds sampled per decision (>= 2: the evidence needs a spread). The rollout
            batch is ``worlds`` x legal cards rows.
        policy: the policy at every seat of the rollouts and whose choice the search departs
            from only on evidence: a registry spec with a batched form (a shipped policy such as
            ``pisti-2p``, a checkpoint or export path, ``expert``, ``greedy``), a player object
            with ``act_batch``, or ``"auto"`` (default: `default_policy`). Checkpoints
            play their most likely legal action.
        z: standard errors the paired mean difference must clear (>= 0; `decide`).
        margin: points a hand it must clear besides (>= 0).
        settings: the game (default: read from the first view).
        device: where the rollouts run (``"cpu"``; ``"cuda"`` on a bigger machine).
    """

    name = "search"

    def __init__(
        self,
        seed: int | None = None,
        worlds: int = DEFAULT_WORLDS,
        policy: str | Player = "auto",
        z: float = DEFAULT_Z,
        margin: float = DEFAULT_MARGIN,
        settings: Settings | None = None,
        device: str = "cpu",
    ) -> None:
        super().__init__(seed)
        if isinstance(worlds, bool) or not isinstance(worlds, int):
            raise TypeError(f"search option 'worlds' must be an int >= 2, got {type(worlds).__name__} {worlds!r}")
        if worlds < 2:
            raise ValueError(f"search option 'worlds' must be an int >= 2 (the evidence needs a spread), got {worlds}")
        for key, value in (("z", z), ("margin", margin)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise ValueError(f"search option {key!r} must be a number >= 0, got {value!r}")
        if not (isinstance(policy, str) or has_batched_form(policy)):
            raise TypeError(f"search option 'policy' must be a player spec or a player with act_batch, got {policy!r}")
        if not isinstance(device, str):
            raise TypeError(f"search option 'device' must be a string like 'cpu' or 'cuda', got {device!r}")
        if settings is not None:
            check_game(settings)
        self.worlds = worlds
        self.policy_spec = policy if isinstance(policy, str) else getattr(policy, "name", type(policy).__name__)
        self.z = float(z)
        self.margin = float(margin)
        self.device = device
        self.settings = settings
        self._policy: Any = None if isinstance(policy, str) else policy
        self._engines: dict[int, Any] = {}
        self._seed = seed if seed is not None else self.rng.getrandbits(64)

    def reset(self, seed: int | None = None) -> None:
        """Reseed (``None`` keeps the seed): the seed and the seat's knowledge fix each choice."""
        super().reset(seed)
        if seed is not None:
            self._seed = seed

    # ------------------------------------------------------------------ decisions
    def choose(self, view: SeatView, legal: list[int]) -> int:
        observation = view.observation()
        rng = random.Random(self._decision_seed(observation))
        worlds = [view.determinize(rng) for _ in range(self.worlds)]
        return self._search(view, legal, observation, worlds, rng.getrandbits(63))

    def choose_in_worlds(self, view: SeatView, worlds: Sequence[Game]) -> int:
        """The choice with ``worlds`` given instead of sampled (each must be a game the seat
        cannot tell apart from the real one; the real game itself is the perfect-information
        case). For tests and analysis; `act` samples its own."""
        legal = view.legal_actions
        observation = view.observation()
        return self._search(view, legal, observation, list(worlds), self._decision_seed(observation))

    def action_values(self, view: SeatView, worlds: Sequence[Game], seed: int = 0) -> tuple[list[int], np.ndarray]:
        """``(legal actions, values)``: the (worlds, actions) rollout values of every legal action
        in each of ``worlds`` (the hand's score difference of the view's side), on the batched
        engine. ``seed`` seeds the policy's draws (none for a checkpoint's argmax)."""
        legal = view.legal_actions
        return legal, self._values(view, legal, list(worlds), seed)

    def _search(self, view: SeatView, legal: list[int], observation: dict, worlds: list[Game], seed: int) -> int:
        if len(legal) == 1:
            return legal[0]
        base = legal.index(self._policy_choice(view, observation, seed))
        values = self._values(view, legal, worlds, seed)
        return legal[decide(values, base, self.z, self.margin)]

    def _decision_seed(self, observation: dict) -> int:
        """A 63-bit seed from the player's seed and what the seat knows (its observation and
        legal actions): never from a hidden card."""
        h = hashlib.blake2b(digest_size=8)
        h.update(str(self._seed).encode())
        h.update(np.ascontiguousarray(observation["observation"]).tobytes())
        h.update(np.ascontiguousarray(observation["action_mask"]).tobytes())
        return int.from_bytes(h.digest(), "little") >> 1

    def _policy_choice(self, view: SeatView, observation: dict, seed: int) -> int:
        import torch

        policy = self._policy_for(view.settings)
        with torch.no_grad():
            obs = torch.from_numpy(np.asarray(observation["observation"], dtype=np.float32))[None].to(self.device)
            mask = torch.from_numpy(np.asarray(observation["action_mask"]) > 0)[None].to(self.device)
            return int(policy.act_batch(obs, mask, torch.Generator(device=self.device).manual_seed(seed)))

    # ------------------------------------------------------------------ rollouts
    def _values(self, view: SeatView, legal: list[int], worlds: list[Game], seed: int) -> np.ndarray:
        """(worlds, actions) hand score differences of the view's side: every legal action in
        every world, then the policy at every seat to the hand's end, as one batch."""
        import torch

        from ..batched.from_game import from_games
        from ..batched.state import take

        settings = view.settings
        policy = self._policy_for(settings)
        W, A = len(worlds), len(legal)
        B = W * A
        engine, buffer = self._engine(settings, B)
        dev = engine.device
        generator = torch.Generator(device=dev).manual_seed(seed)
        with torch.no_grad():
            state = take(from_games(worlds, settings, dev), torch.arange(W, device=dev).repeat_interleave(A))
            actions = torch.tensor(legal, dtype=torch.int64, device=dev).repeat(W)
            totals = rollout_totals(engine, buffer, policy, state, actions, generator)
        side, S = view.side, settings.num_sides
        totals = totals.double()
        own = totals[:, side]
        value = own - (totals.sum(1) - own) / (S - 1)
        return value.view(W, A).cpu().numpy()

    def _engine(self, settings: Settings, batch: int) -> tuple[Any, Any]:
        """The batched engine for ``batch`` rows (one per size met: a decision's rows are
        worlds x legal cards) and its observation buffer."""
        key = (settings, batch)
        if key not in self._engines:
            from ..batched import BatchedPisti

            engine = BatchedPisti(batch, device=self.device, **settings.to_dict())
            self._engines[key] = (engine, engine.observation_buffer())
        return self._engines[key]

    def _policy_for(self, settings: Settings) -> Any:
        """The rollout policy, built on first use for the game ``settings`` (refused: the bluff
        variant, two decks)."""
        check_game(settings)
        if self.settings is None:
            self.settings = settings
        elif settings != self.settings:
            raise ValueError(f"this search player plays {self.settings.to_dict()}, not {settings.to_dict()}")
        if self._policy is None:
            from .registry import checkpoint_location, make_player  # the registry imports this module

            spec = default_policy(settings) if self.policy_spec == "auto" else self.policy_spec
            # A checkpoint plays its most likely legal action: the rollouts are then
            # deterministic, the same continuation for every first card of a world.
            extra = {"play": "argmax"} if checkpoint_location(spec) is not None or spec.endswith((".pt", ".onnx")) else {}
            key = (spec, settings, self.device)
            policy = _POLICIES.get(key) or make_player(spec, seed=0, settings=settings, device=self.device, **extra)
            if not has_batched_form(policy):
                raise ValueError(
                    f"search option 'policy' must have a batched form (act_batch): a shipped policy, a checkpoint, "
                    f"'expert' or 'greedy'; {spec!r} has none"
                )
            _POLICIES[key] = self._policy = policy
            self.policy_spec = spec
        return self._policy

    def __repr__(self) -> str:
        return f"SearchAgent(worlds={self.worlds}, policy={self.policy_spec!r}, z={self.z}, margin={self.margin})"


def check_game(settings: Settings) -> None:
    """``ValueError`` for a game the search cannot play: the bluff variant (R29) or two decks."""
    if not isinstance(settings, Settings):
        raise TypeError(f"settings must be a pisti_env.Settings, got {type(settings).__name__}")
    if settings.bluff:
        raise ValueError(
            "the search player does not play the bluff variant (R29): its argmax rollouts never claim or "
            "challenge, and its worlds cannot tell how a claimant bluffs; use pimc or a bluff-variant policy"
        )
    if settings.decks != 1:
        raise ValueError(
            f"the search player rolls out on the batched engine, which plays one deck (2, 3 or 4 players), "
            f"not {settings.num_players} players"
        )
