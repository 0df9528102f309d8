"""How two players bluff and answer in the bluff variant (R29), over duplicate deals.

``pisti-bluff-stats`` (``python -m training.harness.bluff_stats``) plays single hands with
``bluff=True`` between two players (baselines by name or checkpoint paths, as ``pisti-eval``),
each deal once with each player first, and counts for each player:

* as claimant: its chances to play face down, its claims, how many were bluffs (the face-down
  card not of the lone card's rank), how often its bluffs were believed and its true claims
  challenged; and the chances at which it held a card of the lone card's rank (a true claim
  was open to it: ``true_claim_chances``) with how often it then claimed (``true_claim_rate``:
  a true claim scores at least what playing the card face up does, so below 1 the policy
  leaves points on the table);
* as answerer: how often it challenged, how often a challenge was right (a bluff caught), how
  often it believed a bluff;
* its mean score difference per hand against the other;
* the claimant's side of it by the claimant's hand size when it could claim (``by_hand_size``:
  chances, claims, bluffs, bluffs caught, true claims challenged), a public fact the answerer
  sees too: a policy whose claims are bluffs far more often at one hand size than at another
  can be answered by challenging there and believing elsewhere, which a best response finds.

The referee reads the real face-down card from the engine; the players never do.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

from pisti_env.rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from pisti_env.agents import Player, SeatView, make_player
from pisti_env.util.arguments import check_int
from pisti_env.rules.cards import RANK
from pisti_env.game.engine import Game
from pisti_env.rules.settings import SETTING_NAMES, Settings, make_settings

from pisti_env.tools.flags import ArgumentParser, add_settings_arguments, fail, non_negative_int, positive_int, values_of, writable_file

from .report import write_json

# Fixed by what is measured: two players, single hands, the bluff variant; every other setting is a flag.
FIXED = ("num_players", "partnerships", "target", "decks", "bluff")


# The claimant's counts broken down by its hand size (cards held before it plays).
BY_HAND_SIZE = ("claim_chances", "claims", "bluffs", "bluffs_caught", "true_claims_challenged")

COUNTS = (
    "decisions", "claim_chances", "true_claim_chances", "claims", "bluffs", "bluffs_believed", "bluffs_caught", "true_claims_believed",
    "true_claims_challenged", "answers", "challenges", "challenges_right", "believed_bluffs",
)


def count_deals(players: Sequence[Player], game_settings: Settings, seed: int, start: int, stop: int) -> list[Counter]:
    """The counts of each player over deals ``start..stop-1`` (each once with each player first)."""
    counts = [Counter() for _ in players]
    for deal in range(start, stop):
        for first in (0, 1):
            seat_player = [first, 1 - first]  # seat -> index of the player sitting there
            for index, player in enumerate(players):
                player.reset(seed * 1_000_003 + deal * 2 + first + index)
            game = Game(game_settings, seed=seed * 1_000_003 + deal)
            while not game.done:
                seat = game.turn
                who = seat_player[seat]
                legal = game.legal_actions()
                action = players[who].act(SeatView(game, seat))
                c = counts[who]
                c["decisions"] += 1
                held = len(game.hands[seat])
                if any(FACE_DOWN <= a < BELIEVE for a in legal):
                    c["claim_chances"] += 1
                    c["claim_chances", held] += 1
                    lone_rank = RANK[game.pile[0]]
                    c["true_claim_chances"] += any(RANK[card] == lone_rank for card in game.hands[seat])
                if FACE_DOWN <= action < BELIEVE:
                    bluff = RANK[action - FACE_DOWN] != RANK[game.pile[0]]
                    c["claims"] += 1
                    c["claims", held] += 1
                    c["bluffs"] += bluff
                    c["bluffs", held] += bluff
                elif action in (BELIEVE, CHALLENGE):
                    bluff = RANK[game.claim_card] != RANK[game.pile[0]]
                    claimant = counts[seat_player[game.claimant]]
                    c["answers"] += 1
                    if action == CHALLENGE:
                        c["challenges"] += 1
                        c["challenges_right"] += bluff
                        caught = "bluffs_caught" if bluff else "true_claims_challenged"
                        claimant[caught] += 1
                        # The claimant's hand size when it claimed: one more than now.
                        claimant[caught, len(game.hands[game.claimant]) + 1] += 1
                    else:
                        c["believed_bluffs"] += bluff
                        claimant["bluffs_believed" if bluff else "true_claims_believed"] += 1
                game.step(action)
            totals = [game.hand_results[-1][side]["total"] for side in range(2)]
            for seat in (0, 1):
                counts[seat_player[seat]]["score_diff"] += totals[seat] - totals[1 - seat]
    return counts


@dataclass(frozen=True)
class _RaySetup:
    """A Ray worker's players (`training.harness.ray_backend`); shipped paths replace specs."""

    specs: tuple[str, ...]
    settings: Settings
    seed: int

    def __call__(self, paths: dict[str, str]) -> tuple[list[Player], Settings, int]:
        players = [make_player(paths.get(spec, spec), self.seed, settings=self.settings) for spec in self.specs]
        return players, self.settings, self.seed


def _play_ray_chunk(state: tuple[list[Player], Settings, int], job: tuple[int, int, int, int, int]) -> list[Counter]:
    players, settings, seed = state
    return count_deals(players, settings, seed, job[2], job[3])


def bluff_statistics(
    specs: Sequence[str], deals: int, seed: int = 0, *, ray: str | None = None, chunk: int = 0, **settings: Any
) -> dict[str, dict[str, float]]:
    """Counts and rates per player (keyed by spec) over ``deals`` deals x 2 seatings.

    ``ray``: count the deals in chunks of ``chunk`` (0: automatic) as Ray tasks at this address
    (``"local"``, ``"auto"``, ``HOST:PORT``; `training.harness.ray_backend`); the figures
    are those of the local run. ``settings``: the game's other settings (flags of RULES.md).
    """
    if len(specs) != 2:
        raise ValueError(f"bluff statistics compare two players, got {len(specs)}: {list(specs)}")
    deals, seed = check_int(deals, "deals", low=1), check_int(seed, "seed", low=0)
    game_settings = make_settings(num_players=2, target=None, bluff=True, **settings)
    players = [make_player(spec, seed, settings=game_settings) for spec in specs]
    if ray is None:
        counts = count_deals(players, game_settings, seed, 0, deals)
    else:
        from .duplicate import chunk_jobs
        from . import ray_backend

        jobs = chunk_jobs(deals, seed, 0, ray_backend.cluster_cpus(ray_backend.connect(ray)), chunk)
        counts = [Counter() for _ in specs]
        for part in ray_backend.map_chunks(_RaySetup(tuple(specs), game_settings, seed), _play_ray_chunk, jobs,
                                           address=ray, specs=specs):
            for total, c in zip(counts, part):
                total.update(c)  # update(), not +: a negative score_diff must stay
    hands = 2 * deals
    report = {}
    for spec, c in zip(specs, counts):
        def rate(part: str, whole: str) -> float:
            return c[part] / c[whole] if c[whole] else float("nan")

        report[spec] = {
            **{k: int(c[k]) for k in COUNTS},
            "by_hand_size": {
                str(size): {k: int(c[k, size]) for k in BY_HAND_SIZE}
                for size in sorted({key[1] for key in c if isinstance(key, tuple)})
            },
            "score_diff_per_hand": c["score_diff"] / hands,
            "claim_rate": rate("claims", "claim_chances"),
            "true_claim_rate": (
                (c["claims"] - c["bluffs"]) / c["true_claim_chances"] if c["true_claim_chances"] else float("nan")
            ),
            "bluff_share_of_claims": rate("bluffs", "claims"),
            "bluffs_believed_rate": rate("bluffs_believed", "bluffs"),
            "true_claims_challenged_rate": (
                c["true_claims_challenged"] / (c["claims"] - c["bluffs"]) if c["claims"] > c["bluffs"] else float("nan")
            ),
            "challenge_rate": rate("challenges", "answers"),
            "challenges_right_rate": rate("challenges_right", "challenges"),
        }
    return report


def build_parser() -> ArgumentParser:
    """The command line of ``pisti-bluff-stats``."""
    p = ArgumentParser(prog="pisti-bluff-stats", description=__doc__.splitlines()[0])
    p.add_argument("players", nargs=2, help="two player specs (baseline names or checkpoint paths)")
    p.add_argument("--deals", type=positive_int, default=1000, help="deals, each played twice (default 1000)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="master seed, >= 0 (default 0)")
    p.add_argument("--report-out", type=writable_file, default=None, metavar="FILE",
                   help="also write the figures as JSON to this file (NaN rates as null)")
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="count the deals as Ray tasks: on a new local instance (no ADDRESS), 'auto' or HOST:PORT "
                        "(needs the ray extra); the figures are the same")
    add_settings_arguments(p, exclude=FIXED)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    p = build_parser()
    variants = [name for name in SETTING_NAMES if name not in FIXED]
    args = p.parse_args(argv)
    try:
        report = bluff_statistics(args.players, args.deals, args.seed, ray=args.ray, **values_of(args, variants))
    except (ValueError, TypeError, OSError, RuntimeError) as error:
        return fail("pisti-bluff-stats", error)
    for spec, figures in report.items():
        print(spec)
        for key, value in figures.items():
            if key != "by_hand_size":
                print(f"  {key:<28} {value:.3f}" if isinstance(value, float) else f"  {key:<28} {value}")
        if figures["by_hand_size"]:
            widths = [max(8, len(k)) for k in BY_HAND_SIZE]
            print(f"  {'as claimant, by hand size':<28} " + " ".join(f"{k:>{w}}" for k, w in zip(BY_HAND_SIZE, widths)))
            for size, row in figures["by_hand_size"].items():
                print(f"  {'holding ' + size:<28} " + " ".join(f"{row[k]:>{w}}" for k, w in zip(BY_HAND_SIZE, widths)))
    if args.report_out:
        try:
            write_json({"players": list(args.players), "deals": args.deals, "seed": args.seed, "figures": report},
                       args.report_out)
        except OSError as err:  # a full disk, or the folder removed during the deals
            return fail("pisti-bluff-stats", f"cannot write {args.report_out!r}: {err.strerror or err}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
