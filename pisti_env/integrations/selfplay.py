"""Self-play for single-agent libraries on ``pisti_v0``: one learner seat, the other seats played
by frozen snapshots of the learner's own policy, every reward credited to the seat it belongs to.

    from pisti_env.integrations.selfplay import SelfPlayEnv, SnapshotPool

    pool = SnapshotPool(first="random", size=5)    # who plays the other seats
    env = SelfPlayEnv(opponent=pool, num_players=2, target=None)
    ...                                            # train a masked policy on env (SB3, ...)
    pool.add(policy_snapshot)                      # every K steps, from a callback

`SelfPlayEnv` is a Gymnasium env *over the AEC env* ``pisti_v0`` ([`pisti_env.env`][pisti_env.env]):
it steps the AEC env for every seat, the learner's moves coming from ``step(action)`` and the
other seats' from their players, and hands the learner what the AEC env itself credits to the
learner's agent. No library is imported here: a snapshot is any [`Player`][pisti_env.agents.base.Player]
or any callable ``policy(observation) -> action`` on ``pisti_v0``'s Dict observation (see
``examples/sb3_selfplay.py`` for sb3-contrib's MaskablePPO).

**Crediting.** In ``pisti_v0`` a seat earns rewards on other seats' moves too (a capture changes
every side's score difference, R30), and the AEC API keeps them for it: ``_cumulative_rewards``
of an agent collects everything it received since its own previous move, and
``env.last()`` hands it over when the agent is selected again (at its next decision, or once
more after the end). PettingZoo's SB3 action-mask tutorial wrapper instead returns
``_cumulative_rewards[agent]`` right after that agent's own ``step``, where it holds only the
reward of that one move (the AEC env zeroes it as the agent moves): every reward earned on the
other seats' moves is lost, and a seat's rewards add up to its score difference only by
chance (in 32 and 23 of 500 random 2-player hands for the two seats, in none for both at
once; ``tests/env/test_selfplay_wrapper.py`` reproduces it). Here the reward of the learner's step is
``last()``'s reward when the learner is selected next, so each step's reward is everything its
seat received since its previous decision, the final one included (and the first step also
carries what arrived before the learner's first decision, which a Gymnasium ``reset`` cannot
return). An episode's rewards add up exactly to its final score difference (``reward="diff"``),
or to ±1 / 0 (``reward="win"``). The learner also plays one seat in one stream of
observations; the tutorial's model plays every seat in one stream, so a step's observation
belongs to another seat than its reward.

**Why a layer over pisti_v0 and not** [`PistiEnv`][pisti_env.envs.single_agent.PistiEnv]. ``PistiEnv``
plays the [`Game`][pisti_env.game.Game] directly and computes the learner's reward itself
(cheaper: no AEC bookkeeping). It already takes a player object as ``opponent``, so
``PistiEnv(opponent=SnapshotPool(...))`` trains on the same signal: the same seed, the same
learner actions and the same opponents play the same episode in both, observation for
observation and reward for reward (tested). ``SelfPlayEnv`` exists for what PistiEnv cannot
show: the crediting done on the AEC env through PettingZoo's own API, the one a user wrapping
``pisti_v0`` (or any AEC game) for a single-agent library has to get right, and the AEC env's
own rules on top (its illegal-action penalty, infos, rendering). Everything else is
``pisti_v0``'s or shared: the rewards (`pisti_env.game.rewards`, through ``pisti_v0``), the
spaces, the game seed (`pisti_env.envs.seeding`, through ``pisti_v0``'s ``reset``), the action
conversion (`pisti_env.rules.actions.action_id`, in ``pisti_v0``'s ``step``), the players
(`pisti_env.agents.as_player`, `view_for_agent`).

**Snapshots.** `SnapshotPool` is a player holding the last ``size`` snapshots (plus a
first player until the first snapshot arrives); each episode it draws one of them, uniformly,
to play every seat it holds. The caller refreshes it (``pool.add(snapshot)``, e.g. from a
training callback every K steps). A pool lives in the process that steps its env: with
in-process vector envs (Gymnasium's ``SyncVectorEnv``, SB3's ``DummyVecEnv``) give each env
its own pool and add every snapshot to all of them (``examples/sb3_selfplay.py`` does); a
subprocess vector env's workers hold copies, which only the workers can refresh.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Union

import gymnasium
import numpy as np

from ..rules.actions import action_id
from ..agents import Player, SeatView, as_player, view_for_agent
from ..envs.env import env as pisti_v0_env
from ..rules.settings import Settings
from ..envs.single_agent import SeatPlayers, check_reset_options, check_seat

Policy = Callable[[dict], Any]
"""A policy snapshot: ``policy(observation) -> action`` on ``pisti_v0``'s Dict observation of
the seat to move (``{"observation": float32 vector, "action_mask": int8}``); the action is any
integer-like value and must be legal."""

PlayerLike = Union[str, Player, Policy]


class PolicyPlayer:
    """A policy snapshot (``policy(observation) -> action``) as a [`Player`][pisti_env.agents.base.Player].

    Args:
        policy: called with the seat's observation ([`SeatView.observation`][pisti_env.SeatView.observation], the Dict
            ``pisti_v0`` gives that seat) and returns an integer-like legal action.
        name: the player's name (harness tables, error messages).

    The policy's own randomness (if it samples) is the policy's business: ``reset`` calls
    ``policy.reset(seed)`` when the policy has one, else does nothing.
    """

    def __init__(self, policy: Policy, name: str = "policy") -> None:
        if not callable(policy):
            raise TypeError(f"policy must be callable as policy(observation) -> action, got {type(policy).__name__}")
        self.policy = policy
        self.name = name

    def reset(self, seed: int | None = None) -> None:
        reset = getattr(self.policy, "reset", None)
        if callable(reset):
            reset(seed)

    def act(self, view: SeatView) -> int:
        return action_id(self.policy(view.observation()), view.settings.num_actions)

    def __repr__(self) -> str:
        return f"PolicyPlayer({self.name!r})"


def as_selfplay_player(player: PlayerLike, role: str, **kwargs: Any) -> Player:
    """``player`` as a [`Player`][pisti_env.agents.base.Player]: a spec or a Player through
    `as_player` (``kwargs`` passed on), any other callable as a
    `PolicyPlayer`. ``role`` names the argument in the ``TypeError`` for anything else."""
    if isinstance(player, (str, Player)):
        return as_player(player, role, **kwargs)
    if callable(player):
        return PolicyPlayer(player)
    raise TypeError(
        f"{role} must be a player spec (e.g. 'random', 'greedy'), a pisti_env.agents.Player or a "
        f"policy callable policy(observation) -> action, got {type(player).__name__}"
    )


class SnapshotPool:
    """A player that plays as one of the learner's last ``size`` policy snapshots, drawn per episode.

    Args:
        first: who plays until the first snapshot is added (a player spec, a
            [`Player`][pisti_env.agents.base.Player] or a policy callable; default ``"random"``).
            It leaves the pool when the first snapshot arrives.
        size: how many snapshots the pool keeps (the newest; ``1`` = always the latest
            snapshot). More snapshots mean more varied opponents and less chasing of the
            learner's own latest habits, at the price of older, weaker ones.
        seed: seeds the draws until the first `reset` with a seed.
        settings: the game settings, for a spec ``first`` (see [`make_player`][pisti_env.agents.make_player]).

    ``reset(seed)`` (the env calls it at every episode) reseeds the pool's draw and picks the
    snapshot that plays the episode; ``act(view)`` asks it. One pool can play several seats
    (every seat it is reset for plays the snapshot of the last reset).
    """

    name = "snapshot-pool"

    def __init__(
        self, first: PlayerLike = "random", size: int = 5, seed: int | None = None, settings: Settings | None = None
    ) -> None:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ValueError(f"size must be an int >= 1 (how many snapshots to keep), got {size!r}")
        self.size = int(size)
        self._settings = settings
        self.snapshots: list[Player] = [as_selfplay_player(first, "first", seed=seed, settings=settings)]
        self._first = True  # snapshots[0] is ``first``, to drop at the first add()
        self.rng = random.Random(seed)
        self.current = self.snapshots[0]
        self.added = 0

    def add(self, snapshot: PlayerLike) -> None:
        """Keep ``snapshot`` (a Player or a policy callable; a spec too) and drop the oldest
        beyond ``size`` (``first`` goes at the first add). It plays from the next episode on."""
        player = as_selfplay_player(snapshot, "snapshot", settings=self._settings)
        if self._first:
            self.snapshots, self._first = [], False
        self.snapshots = (self.snapshots + [player])[-self.size:]
        self.added += 1

    def reset(self, seed: int | None = None) -> None:
        """Reseed the draw with ``seed`` (``None``: go on from the last), draw this episode's
        snapshot and reset it with a seed from the same draw."""
        if seed is not None:
            self.rng.seed(seed)
        self.current = self.snapshots[self.rng.randrange(len(self.snapshots))]
        self.current.reset(self.rng.getrandbits(63))

    def act(self, view: SeatView) -> int:
        return self.current.act(view)

    def __repr__(self) -> str:
        return f"SnapshotPool(size={self.size}, holding={len(self.snapshots)}, added={self.added})"


class SelfPlayEnv(gymnasium.Env):
    """One learner seat of ``pisti_v0`` as a Gymnasium env; the other seats played by snapshots.

    Args:
        opponent: who plays the other sides' seats: a `SnapshotPool` (the self-play
            case), any [`Player`][pisti_env.agents.base.Player], a policy callable
            ``policy(observation) -> action`` on ``pisti_v0``'s Dict observation, or a player
            spec (``"random"``, ``"greedy"``, ...; a spec builds one player per seat, an object
            plays every seat it is given). Default ``"random"``.
        partner: who plays the learner's partner with partnerships (4 players, R4), as
            ``opponent``; ``None`` (default) means the same as ``opponent``. Refused without
            partnerships.
        seat: the learner's seat, or ``None`` (default) to draw it for every episode (a learner
            that must play every seat, from the first to move to the dealer).
        env: the AEC env to wrap, a ``pisti_v0`` (``pisti_env.env(...)`` or ``raw_env(...)``,
            wrapped or not); ``None`` (default) builds ``pisti_env.env(reward=reward,
            illegal_action=illegal_action, render_mode=render_mode, **settings)``. When given,
            ``reward``, ``illegal_action``, ``render_mode`` and settings must be left out
            (they are the env's own).
        reward: ``"diff"`` (default; an episode sums to its final score difference) or
            ``"win"``; see `pisti_env.envs.env`.
        illegal_action: what ``pisti_v0`` does with an illegal learner action: ``"penalty"``
            (default) ends the episode with a penalty no illegal move can profit from, credited
            to the learner like any reward; ``"raise"``: ``ValueError``, nothing changed.
            An opponent's illegal action always raises ``ValueError`` (a broken snapshot, not
            something to learn from).
        render_mode: ``None``, ``"ansi"`` or ``"human"``, as ``pisti_v0``.
        **settings: the game settings (see [`make_settings`][pisti_env.rules.make_settings]).

    Observations are ``pisti_v0``'s Dict for the learner's seat (all-zero mask once the episode
    is over); `action_masks` gives the mask as bools (sb3-contrib's MaskablePPO). Infos:
    ``"side"`` and ``"seat"`` of the learner, plus whatever ``pisti_v0`` gave the learner's
    agent since its previous decision (``"hand_result"`` and ``"match_scores"`` when a hand
    ended, ``"illegal_move"``). Episodes end by ``terminated``, never ``truncated``.

    Seeding: ``reset(seed=s)`` resets ``pisti_v0`` with ``s`` (the same deal as
    ``pisti_v0``, and as ``PistiEnv``) and draws the learner's seat and the players' seeds from
    ``s`` as ``PistiEnv`` does, so the same seed plays the same episode in both for the same
    learner actions and the same players. ``options`` may hold ``"deck"``, ``"dealer"`` (as
    ``pisti_v0``) and ``"seat"`` (the learner's seat this episode).
    """

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 1}

    def __init__(
        self,
        opponent: PlayerLike = "random",
        partner: PlayerLike | None = None,
        seat: int | None = None,
        env: Any = None,
        reward: str = "diff",
        illegal_action: str = "penalty",
        render_mode: str | None = None,
        **settings: Any,
    ) -> None:
        if env is None:
            env = pisti_v0_env(reward=reward, illegal_action=illegal_action, render_mode=render_mode, **settings)
        else:
            given = [k for k, v in (("reward", reward != "diff"), ("illegal_action", illegal_action != "penalty"),
                                    ("render_mode", render_mode is not None)) if v] + sorted(settings)
            if given:
                raise ValueError(f"with env= given, leave out {given}: they are the AEC env's own")
            raw = getattr(env, "unwrapped", None)
            if not (hasattr(raw, "agent_name_mapping") and hasattr(raw, "settings") and hasattr(env, "last")):
                raise TypeError(f"env must be a pisti_v0 AEC env (pisti_env.env() or raw_env()), got {type(env).__name__}")
        raw = env.unwrapped
        if raw.observation_format != "dict":
            raise ValueError(
                f"SelfPlayEnv reads the Dict observation (its action_mask), not observation_format="
                f"{raw.observation_format!r}; leave observation_format at its default 'dict'"
            )
        self.aec = env
        self.settings = raw.settings
        self.render_mode = raw.render_mode
        n = self.settings.num_players
        self.fixed_seat = check_seat(seat, n, "seat")
        if partner is not None and not self.settings.partnerships:
            raise ValueError("partner is only for partnerships (4 players, partnerships=True); leave it None")
        agent0 = raw.possible_agents[0]
        self.observation_space = env.observation_space(agent0)
        self.action_space = env.action_space(agent0)
        self.possible_agents = list(raw.possible_agents)
        self._others = SeatPlayers(self.settings, opponent, partner, self.fixed_seat, as_selfplay_player)
        self.seat = -1
        self._started = False
        self._over = True
        self._carry = 0.0
        self._obs: dict[str, np.ndarray] | None = None

    # ------------------------------------------------------------------ reset / step
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Reset ``pisti_v0`` and play the other seats up to the learner's first decision.
        A bad seed or option raises and leaves the env as it was."""
        options, seat = check_reset_options(options, self.settings.num_players)
        n = self.settings.num_players
        aec_options = {k: options[k] for k in ("deck", "dealer") if k in options}
        self.aec.reset(seed=seed, options=aec_options)  # raises on a bad seed, deck or dealer
        super().reset(seed=seed)  # np_random: the seat draw and the players' seeds, as PistiEnv
        drawn = int(self.np_random.integers(n))
        player_seeds = self.np_random.integers(0, 2**63, size=n)
        if seat is None:
            seat = self.fixed_seat
        self.seat = drawn if seat is None else seat
        for other in range(n):
            if other != self.seat:
                self._others.of(self.seat, other).reset(int(player_seeds[other]))
        self._started, self._over = True, False
        obs, self._carry, _, info = self._advance()
        return obs, info

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """The learner's move in ``pisti_v0``, then the other seats' until the learner is
        selected again. The reward is what ``pisti_v0``'s ``last()`` credits the learner's agent
        then: everything its seat received since this decision (plus, on the first step, what
        arrived before it)."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._over:
            raise RuntimeError("the episode is over: call reset() to play again")
        self.aec.step(action)  # pisti_v0 converts, checks (raise or penalty) and credits
        obs, reward, terminated, info = self._advance()
        reward, self._carry = reward + self._carry, 0.0
        return obs, float(reward), terminated, False, info

    def _advance(self) -> tuple[dict[str, np.ndarray], float, bool, dict[str, Any]]:
        """Step the AEC env for the other seats until the learner's agent is selected; then read
        its ``last()``: its observation and every reward credited to it since it last moved."""
        aec, learner = self.aec, self.possible_agents[self.seat]
        while aec.agent_selection != learner:
            agent = aec.agent_selection
            if aec.terminations[agent] or aec.truncations[agent]:
                aec.step(None)  # the AEC end protocol: a finished agent steps with None
                continue
            view = view_for_agent(aec, agent)
            player = self._others.of(self.seat, view.seat)
            action = player.act(view)
            if action_id(action, self.settings.num_actions) not in view.legal_actions:
                raise ValueError(
                    f"the {agent} player {player!r} chose {action!r}, not a legal action "
                    f"(legal: {view.legal_actions}); a snapshot must respect the action mask"
                )
            aec.step(action)
        obs, reward, terminated, truncated, info = aec.last()
        self._over = bool(terminated or truncated)
        self._obs = obs
        info = dict(info, side=self.settings.side_of(self.seat), seat=self.seat)
        if "hand_result" in info:
            info["hand_result"] = [dict(side) for side in info["hand_result"]]
        return obs, float(reward), self._over, info

    # ------------------------------------------------------------------ masks, render
    def action_masks(self) -> np.ndarray:
        """The learner's legal actions now as a bool array (all False once the episode is over
        or before the first reset): what sb3-contrib's ``MaskablePPO`` asks for."""
        if self._obs is None:
            return np.zeros(self.action_space.n, dtype=np.bool_)
        return self._obs["action_mask"].astype(np.bool_)

    def render(self) -> str | None:
        """``pisti_v0``'s rendering of the table (``render_mode`` as given to it)."""
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()
