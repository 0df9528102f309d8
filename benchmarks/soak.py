"""A long random-play soak: N random hands per variant combination through the referee of
``tests/referee.py`` (an independent tally written from RULES.md, checked after every step:
every card accounted for, hand sizes and turns, the R20-R23 totals, pişti counts and points,
R24-R26 match ends, the R29 claims) plus an R30/R31 check that the observation of the seat to
move does not change when every card it cannot know is dealt again.

Not part of the test run (``tests/env/test_soak.py`` runs it for a few hands). Prints, per
combination, the hands, decisions, observation checks and violations, then the totals; exits
with status 1 if any invariant broke (each violation is printed with its combination and seed,
which replays it).

Usage::

    python benchmarks/soak.py --hands 200            # 42 combinations x 200 hands
    python benchmarks/soak.py --full --hands 20      # the whole variant product (360 combinations)
    python benchmarks/soak.py --only 4p-partners --only bluff --hands 1000
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Iterator, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the referee lives with the tests

from pisti_env import make_settings  # noqa: E402

from helpers import TABLES  # noqa: E402
from referee import ObservationCheck, play_and_check, play_and_check_bluff  # noqa: E402

# Scoring variants, match length and the shown stock bottom (R14, R16, R17, R24-R26, R28):
# the covering set gives every value of every axis on every table; --full takes the product.
PLAIN_AXES = dict(double_pisti=(20, 10, 0), last_card_pisti=(True, False), ten_diamonds_pisti_bonus=(0, 3),
                  show_stock_bottom=(False, True), match=((None, 0), (51, 2), (151, 0), (101, 5)))
PLAIN_COVER = [(20, True, 0, False, (None, 0)), (10, False, 3, True, (51, 2)), (0, True, 3, False, (151, 0)),
               (20, False, 0, True, (101, 5))]
# With bluffs (R29): the jack-double stake too.
BLUFF_AXES = dict(bluff_jack_double=(False, True), last_card_pisti=(True, False), double_pisti=(20, 10, 0),
                  ten_diamonds_pisti_bonus=(0, 3), show_stock_bottom=(False, True), match=((None, 0), (51, 2), (151, 0)))
BLUFF_COVER = [(False, True, 20, 0, False, (None, 0)), (True, False, 0, 3, True, (51, 2)),
               (True, True, 10, 3, False, (151, 0))]
SHORT = dict(double_pisti="dp", last_card_pisti="lc", ten_diamonds_pisti_bonus="td", show_stock_bottom="sb",
             bluff_jack_double="jd")  # the names' abbreviations: dp20 = double_pisti=20, lc1 = last_card_pisti=True


def combinations(full: bool = False, only: Sequence[str] = ()) -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, settings keywords) of every combination: each table (players, partnerships, decks)
    with and without bluffs, times the covering variants (or with ``full`` their product); with
    ``only``, those whose name holds every one of these words."""
    for table, base in TABLES.items():
        for bluff, axes, cover in ((False, PLAIN_AXES, PLAIN_COVER), (True, BLUFF_AXES, BLUFF_COVER)):
            rows = itertools.product(*axes.values()) if full else cover
            for row in rows:
                values = dict(zip(axes, row))
                target, margin = values.pop("match")
                kw = {**base, **values, "bluff": bluff, "target": target, "win_margin": margin}
                words = [table, "bluff" if bluff else "plain"] + [f"{SHORT[k]}{int(v)}" for k, v in values.items()]
                words.append("hand" if target is None else f"to{target}" + (f"+{margin}" if margin else ""))
                if all(word in words for word in only):
                    yield " ".join(words), kw


def soak(hands: int, seed: int = 0, full: bool = False, observe_every: int = 1, only: Sequence[str] = (),
         out=sys.stdout) -> dict[str, Any]:
    """Play at least ``hands`` hands per combination (of `combinations`: ``full``,
    ``only``) under the referee, checking the observation every ``observe_every`` decisions;
    returns the totals
    (``hands``, ``decisions``, ``observation_checks``, ``worlds_differing``, ``violations``:
    a list of (combination, seed, message))."""
    totals = dict(combinations=0, hands=0, decisions=0, observation_checks=0, worlds_differing=0, violations=[])
    start = time.perf_counter()
    print(f"{'combination':<52} {'hands':>6} {'decisions':>9} {'obs.checks':>10} {'violations':>10}", file=out)
    for index, (name, kw) in enumerate(combinations(full, only)):
        settings = make_settings(**kw)
        done = decisions = checks = differing = bad = 0
        episode = 0
        while done < hands:
            episode_seed = seed * 1_000_003 + index * 100_000 + episode
            episode += 1
            check = ObservationCheck(settings, episode_seed, observe_every)
            try:
                (play_and_check_bluff if settings.bluff else play_and_check)(settings, episode_seed, on_step=check)
            except Exception as error:  # a broken invariant (AssertionError) or a crash: both violations
                bad += 1
                where = traceback.extract_tb(error.__traceback__)[-1]
                totals["violations"].append((name, episode_seed, f"{type(error).__name__}: {error} "
                                             f"({Path(where.filename).name}:{where.lineno})"))
                print(f"VIOLATION {name} seed {episode_seed}: {totals['violations'][-1][2]}", file=out)
            game = check.game
            done += game.hands_completed if game is not None else 1
            decisions += check.steps
            checks += check.checks
            differing += check.worlds_differing
        print(f"{name:<52} {done:>6} {decisions:>9} {checks:>10} {bad:>10}", file=out, flush=True)
        totals["combinations"] += 1
        totals["hands"] += done
        totals["decisions"] += decisions
        totals["observation_checks"] += checks
        totals["worlds_differing"] += differing
    totals["seconds"] = time.perf_counter() - start
    print(f"TOTAL {totals['combinations']} combinations, {totals['hands']:,} hands, {totals['decisions']:,} decisions, "
          f"{totals['observation_checks']:,} observation checks ({totals['worlds_differing']:,} with other hands "
          f"redealt), {len(totals['violations'])} violations, {totals['seconds']:.0f} s", file=out)
    return totals


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=100, help="hands per combination (at least; whole episodes are played)")
    parser.add_argument("--seed", type=int, default=0, help="master seed (a violation prints the episode seed)")
    parser.add_argument("--full", action="store_true", help="the whole variant product instead of the covering set")
    parser.add_argument("--observe-every", type=int, default=1, help="check the observation every k decisions")
    parser.add_argument("--only", action="append", default=[], metavar="WORD",
                        help="only the combinations whose name holds this word (repeatable: all of them), e.g. 3p, bluff, hand")
    args = parser.parse_args(argv)
    if args.hands < 1 or args.observe_every < 1:
        parser.error("--hands and --observe-every must be >= 1")
    totals = soak(args.hands, args.seed, args.full, args.observe_every, args.only)
    return 1 if totals["violations"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
