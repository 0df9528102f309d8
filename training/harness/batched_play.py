"""Duplicate deals on the batched engine: the same deals as `.duplicate`, every game of a
block stepped at once (issue 17).

The Python path (`.duplicate.run_games`) plays deal ``i`` as ``Game(settings,
seed=stream_seed(master, stream, i))``, once per seating. Here that game's dealer and deck
come from `pisti_env.game.deal.first_deal` (the same draws, R5–R7, R28), and those decks
and dealers start the batched engine's games (`pisti_env.batched.transitions.first_state`),
one row per (deal, seating). Both engines then play the same hand from the same cards
(``tests/batched/test_batched.py`` keeps them equal move for move), so a player that chooses the same
action for the same observation in both forms gives the same per-deal results on both paths:
a checkpoint (its most likely legal action) does, which ``tests/harness/test_batched_eval.py`` checks
deal by deal.

``random``, ``greedy`` and ``expert`` draw here exactly as on the Python path: each seat of
each game keeps the ``random.Random`` its Python player would have (seeded by
`.duplicate.player_seed`) and draws from it at the same decisions (``random``: any
decision with two or more legal actions; ``greedy`` and ``expert``: a tie among their best
cards, `best_cards`,
`best_cards`), so they give the Python
path's results deal by deal too. Other players with random choices (``bluffer``,
``challenger``, a sampling checkpoint) draw from one torch generator per block, seeded by
(master seed, stream, block): reproducible with the seed and deal count, equal to the Python
path in distribution only.

What plays here (`why_not_batched` says why a table does not): single hands
(``target=None``) of one deck, every entry a player with a batched form
(`pisti_env.agents.has_batched_form`). Matches deal their later hands from the Python
game's generator, which the batched engine does not have (it hashes its own decks), so they
stay on the Python path. Replays of the first games are written by playing the recorded actions
again on a [`GameRecorder`][pisti_env.tools.replay.GameRecorder], so they are the games played here.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Sequence

from pisti_env.rules.actions import BELIEVE
from pisti_env.agents import Agent, ExpertAgent, GreedyAgent, Player, RandomAgent, has_batched_form
from pisti_env.util.arguments import check_int
from pisti_env.rules.cards import NUM_CARD_IDS
from pisti_env.game.deal import first_deal
from pisti_env.tools.replay import GameRecorder
from pisti_env.rules.settings import Settings

from .duplicate import DEAL, PlayerError, Table, failure_text, player_seed, stream_seed

ENGINES = ("auto", "python", "batched")
# Deals per batch: every (deal, seating) of a block is one row of the batched engine. Large
# enough to amortise the per-step cost of the engine's ~150 tensor operations, small enough to
# keep a block's observations (rows x observation size floats) in a few tens of MB.
BLOCK_DEALS = 4096
# The random draws of block ``b`` come from stream ``NOISE_STREAM + stream`` of the master seed
# (apart from the deal streams DEAL and MATCH of `.duplicate`).
NOISE_STREAM = 16


def why_not_batched(table: Table, players: Sequence[Player]) -> str | None:
    """Why ``table`` cannot be played on the batched engine by ``players`` (one per entry), or
    ``None`` when it can."""
    s = table.settings
    if s.target is not None:
        return ("matches deal their later hands from the Python game's own generator, which the batched engine "
                "does not reproduce")
    if s.decks != 1:
        return f"the batched engine plays one deck (2, 3 or 4 players), not {s.num_players} players"
    if s.bluff and s.show_stock_bottom:
        return ("with bluff and show_stock_bottom the batched greedy cannot tell the shown stock-bottom card in a "
                "claim (see pisti_env.agents.greedy_batched)")
    slow = [spec for spec, p in zip(table.specs, players) if not has_batched_form(p)]
    if slow:
        return (f"{slow} have no batched form (act_batch): only random, greedy, expert (without the bluff variant or "
                "show_stock_bottom), bluffer, challenger and checkpoints do")
    return None


def worth_batching(players: Sequence[Player]) -> bool:
    """Whether ``evaluate(engine="auto")`` plays a table that can play batched on the batched
    engine: when some player is not a scripted [`Agent`][pisti_env.agents.base.Agent] (a
    checkpoint, a model wrapped as a player), whose network is far faster on a batch than
    one decision at a time. Scripted players alone are as fast on the Python engine (and its
    worker processes) and need no torch."""
    return any(not isinstance(p, Agent) for p in players)


def play_batched(
    table: Table,
    players: Sequence[Player],
    count: int,
    master_seed: int,
    *,
    stream: int = DEAL,
    block: int = BLOCK_DEALS,
    progress: Callable[[int], None] | None = None,
    save_games: int = 0,
    device: str = "cpu",
) -> list[list[dict[str, Any]]]:
    """Play ``count`` duplicate deals of ``table`` (each once per seating) on the batched
    engine; the records are those of `.duplicate.run_games`, in game order.

    Args:
        table: the specs, seatings and settings (single hands, see `why_not_batched`).
        players: one player per entry, each with a batched form (``act_batch``); an entry
            holding several seats chooses for all of them.
        count: number of deals.
        master_seed: the evaluation's seed; deal ``i`` is the Python path's deal ``i``.
        stream: the deal stream (`.duplicate.DEAL`).
        block: deals stepped together (memory grows with it). The results of checkpoints,
            ``random`` and ``greedy`` do not depend on it; those of players drawing from the
            block's generator (``bluffer``, ``challenger``, a sampling checkpoint) do.
        progress: called with the number of deals just finished.
        save_games: record the first ``save_games`` deals as replays (each record's ``replay``).
        device: the torch device of the engine (the players' tensors must live there too).

    Raises ``ValueError`` when the table cannot be played here (`why_not_batched`).
    """
    reason = why_not_batched(table, players)
    if reason is not None:
        raise ValueError(f"cannot play {list(table.specs)} on the batched engine: {reason}")
    if len(players) != len(table.specs):
        raise ValueError(f"players must hold one player per entry ({len(table.specs)}), got {len(players)}")
    count = check_int(count, "count", low=0)
    block = check_int(block, "block", low=1)
    records: list[list[dict[str, Any]]] = []
    for index, start in enumerate(range(0, count, block)):
        stop = min(start + block, count)
        seeds = [stream_seed(master_seed, stream, i) for i in range(start, stop)]
        noise = stream_seed(master_seed, NOISE_STREAM + stream, index)
        part, actions = _play_block(table, players, seeds, noise, device, max(0, min(save_games, stop) - start))
        if actions:
            meta = [{"source": "pisti-eval", "stream": stream, "game": start + d} for d in range(len(actions))]
            _attach_replays(table, part, seeds, actions, meta)
        records.extend(part)
        if progress is not None:
            progress(stop - start)
    return records


def _play_block(
    table: Table, players: Sequence[Player], seeds: list[int], noise_seed: int, device: str, save: int
) -> tuple[list[list[dict[str, Any]]], list[list[list[int]]]]:
    """One block: the deals seeded ``seeds``, every seating; returns the records and, for the
    first ``save`` deals, each seating's actions in order."""
    import torch

    from pisti_env.batched import BatchedPisti
    from pisti_env.batched.transitions import first_state

    settings: Settings = table.settings
    seatings = table.seatings
    k, D = len(seatings), len(seeds)
    B = D * k  # row d * k + j: deal d at seating j
    deals = [first_deal(settings, s) for s in seeds]  # the Python path's dealer and deck of each deal
    dev = torch.device(device)
    engine = BatchedPisti(B, device=dev, **settings.to_dict())
    decks = torch.tensor([deck for _, deck in deals], dtype=torch.int64, device=dev).repeat_interleave(k, 0)
    dealers = torch.tensor([dealer for dealer, _ in deals], dtype=torch.int64, device=dev).repeat_interleave(k, 0)
    state = first_state(engine.tables, decks, dealers)  # the Python engine's decks: valid and cut (R7, R28)
    observation = torch.empty(B, engine.observation_size, dtype=torch.float32, device=dev)
    out = engine.peek(state, observation)
    seat_entry = torch.tensor(seatings, dtype=torch.int64, device=dev).repeat(D, 1)  # (B, n)
    generator = torch.Generator(device=dev).manual_seed(noise_seed)
    draws = _PythonDraws(settings, seeds, k, dev)

    finished = torch.zeros(B, dtype=torch.bool, device=dev)
    totals = torch.zeros(B, settings.num_sides, dtype=torch.int64, device=dev)
    winner = torch.full((B,), -1, dtype=torch.int64, device=dev)
    saved_rows = save * k
    history: list[torch.Tensor] = []
    while True:
        # A single legal action is taken without asking (as Agent.act does): a quarter of the
        # decisions, the last card of each round of the deal.
        mask = out.action_mask
        forced = mask.sum(1) == 1
        actions = mask.to(torch.uint8).argmax(1)
        entry = seat_entry.gather(1, out.seat[:, None]).squeeze(1).masked_fill(finished | forced, -1)
        for e, player in enumerate(players):
            rows = (entry == e).nonzero().squeeze(1)
            if not rows.numel():
                continue
            # index_select: the same rows as observation[rows], several times faster on a CPU.
            seen, legal = observation.index_select(0, rows), mask.index_select(0, rows)
            try:
                if draws.plays(player):
                    chosen = draws.act(player, rows, out.seat.index_select(0, rows), seen, legal, generator)
                else:
                    chosen = player.act_batch(seen, legal, generator)
                if not isinstance(chosen, torch.Tensor) or tuple(chosen.shape) != tuple(rows.shape) \
                        or chosen.dtype.is_floating_point or chosen.dtype == torch.bool:
                    raise PlayerError(table.specs[e], f"returned {_described(chosen)} for {rows.numel()} games; "
                                                      "act_batch returns one integer action per row")
                actions.index_copy_(0, rows, chosen.to(device=dev, dtype=torch.int64))
            except (KeyboardInterrupt, PlayerError):
                raise
            except BaseException as error:  # SystemExit included: a player never ends the program
                raise PlayerError(table.specs[e], f"raised {failure_text(error)}") from error
        if saved_rows:
            history.append(actions[:saved_rows].masked_fill(finished[:saved_rows], -1).clone())
        active = None if not bool(finished.any()) else ~finished
        try:
            state, out = engine.step_state(state, actions, observation, active)
        except ValueError as error:  # an illegal action: the engine names the game, this the player
            taken = actions.clamp(0, mask.shape[1] - 1)[:, None]
            wrong = ~mask.gather(1, taken).squeeze(1) | (actions < 0) | (actions >= mask.shape[1])
            wrong &= entry >= 0
            if not bool(wrong.any()):
                raise
            raise PlayerError(table.specs[int(entry[wrong.nonzero()[0, 0]])],
                              f"chose an illegal action: {error}") from None
        ended = out.done
        if bool(ended.any()):
            totals = torch.where(ended[:, None], out.match_scores, totals)
            winner = torch.where(ended, out.winner, winner)
            finished = finished | ended
            if bool(finished.all()):
                break

    totals_list, winner_list = totals.cpu().tolist(), winner.cpu().tolist()
    records = [
        [
            {"dealer": deals[d][0], "totals": totals_list[d * k + j],
             "winner": None if winner_list[d * k + j] < 0 else winner_list[d * k + j], "hands": 1}
            for j in range(k)
        ]
        for d in range(D)
    ]
    played: list[list[list[int]]] = []
    if saved_rows:
        steps = torch.stack(history, 1).cpu().tolist()  # (saved rows, steps), -1 once finished
        played = [[[a for a in steps[d * k + j] if a >= 0] for j in range(k)] for d in range(save)]
    return records, played


class _PythonDraws:
    """``random``, ``greedy`` and ``expert`` with the random draws of their Python players: one
    ``random.Random`` per (row, seat), seeded as the Python path reseeds the seat's player
    (`.duplicate.player_seed` of the deal's seed, the seating and the seat), drawn from
    at the decisions where the Python player draws, with the same ``randrange``.

    Args:
        settings: the game (greedy's batched form reads its observations).
        seeds: the block's deal seeds; row ``d * seatings + j`` is deal ``d`` at seating ``j``.
        seatings: seatings per deal.
        device: the engine's device.
    """

    def __init__(self, settings: Settings, seeds: list[int], seatings: int, device: Any) -> None:
        self.settings, self.seeds, self.seatings, self.device = settings, seeds, seatings, device
        self._rngs: list[random.Random | None] = [None] * (len(seeds) * seatings * settings.num_players)
        self._greedy = None

    @staticmethod
    def plays(player: Player) -> bool:
        """Whether ``player`` is one whose Python draws this reproduces (exactly ``random``,
        ``greedy`` or ``expert`` with a batched form, not a subclass such as ``bluffer``)."""
        return type(player) in (RandomAgent, GreedyAgent) or (type(player) is ExpertAgent and has_batched_form(player))

    def _rng(self, row: int, seat: int) -> random.Random:
        """The generator of ``seat`` in game ``row``, made at its first draw."""
        at = row * self.settings.num_players + seat
        rng = self._rngs[at]
        if rng is None:
            seed = player_seed(self.seeds[row // self.seatings], row % self.seatings, seat)
            rng = self._rngs[at] = random.Random(seed)
        return rng

    def act(self, player: Player, rows: Any, seats: Any, observation: Any, mask: Any, generator: Any) -> Any:
        """The actions of ``player`` (random, greedy or expert) for ``rows`` (each with two or
        more legal actions), whose seats to move are ``seats``."""
        import torch

        if isinstance(player, RandomAgent):  # Agent.act: legal[rng.randrange(len(legal))]
            choices = mask
            action = torch.zeros(rows.numel(), dtype=torch.int64, device=mask.device)
            draw = torch.ones(rows.numel(), dtype=torch.bool, device=mask.device)
        else:  # greedy_card and ExpertAgent.choose: best[rng.randrange(len(best))] on a tie
            if self._greedy is None:
                from pisti_env.agents.greedy_batched import BatchedGreedy

                self._greedy = BatchedGreedy(self.settings, self.device)
            form = player.batched_form(mask.device) if isinstance(player, ExpertAgent) else self._greedy
            choices = form.best_cards(observation, mask[:, :NUM_CARD_IDS])
            action = choices.to(torch.uint8).argmax(1)
            draw = choices.sum(1) > 1
            # R29: the answers to a claim draw nothing (greedy's: expert's batched form has no bluff variant).
            if mask.shape[1] > BELIEVE:
                answering = mask[:, BELIEVE]
                if bool(answering.any()):
                    at = answering.nonzero().squeeze(1)
                    action[at] = self._greedy(observation[at], mask[at], generator)
                    draw &= ~answering
        at = draw.nonzero().squeeze(1)
        if at.numel():
            options = choices[at]
            counts = options.sum(1).tolist()
            n, rngs = self.settings.num_players, self._rngs  # a list: the hot loop of a tie-heavy player
            picks = [(rngs[r * n + s] or self._rng(r, s)).randrange(c)
                     for r, s, c in zip(rows[at].tolist(), seats[at].tolist(), counts)]
            nth = torch.tensor(picks, dtype=torch.int64, device=mask.device)[:, None] + 1
            action[at] = (options & (options.cumsum(1) == nth)).to(torch.uint8).argmax(1)
        return action


def _attach_replays(
    table: Table, records: list[list[dict[str, Any]]], seeds: list[int], actions: list[list[list[int]]],
    meta: list[dict[str, Any]],
) -> None:
    """Each saved deal's games played again on a [`GameRecorder`][pisti_env.tools.replay.GameRecorder] with the actions taken
    on the batched engine (the same game: same deck, dealer and moves); the records gain their
    ``replay``, and the replayed result must be the batched one."""
    for d, per_seating in enumerate(actions):
        for j, moves in enumerate(per_seating):
            lines: list[dict[str, Any]] = []
            recorder = GameRecorder(table.settings, [table.specs[e] for e in table.seatings[j]], lines.append,
                                    seed=seeds[d], meta={**meta[d], "seating": j})
            for a in moves:
                recorder.step(a)
            game = recorder.game
            if not game.done or list(game.match_scores) != records[d][j]["totals"]:  # pragma: no cover - engines agree
                raise RuntimeError(f"deal {meta[d]['game']} seating {j}: the replay does not reproduce the batched game")
            records[d][j]["replay"] = lines


def _described(value: Any) -> str:
    """What a player returned, for an error: a tensor's dtype and shape, else its type."""
    shape = getattr(value, "shape", None)
    return f"{getattr(value, 'dtype', type(value).__name__)} of shape {list(shape)}" if shape is not None \
        else type(value).__name__
