"""The referee of random play: an independent tally of every hand written from RULES.md
(R5-R29), checked against the engine after every step; shared by ``tests/engine/test_invariants.py``
and the long soak ``benchmarks/soak.py`` (one implementation).

After every step: card conservation (every physical card in exactly one place, location codes
consistent with the containers), hand sizes and the seat to move as R6/R18/R27 prescribe,
per-side counters consistent with the captured cards. At every hand end: the R20-R23 totals,
and a hand result equal to what a shadow tally (fed only with the cards played and the pile
they landed on) computes from the rules (R10-R19). At match end: R24-R26. With bluffs (R29) a
shadow that also follows claims and answers checks the counters and hand results.

`play_and_check` and `play_and_check_bluff` play one episode at random and raise
``AssertionError`` at the first broken invariant; ``on_step(game)``, when given, is called
after every step (the soak checks the observations there).
"""

from __future__ import annotations

import random
from typing import Callable

from pisti_env import Game
from pisti_env.rules.actions import BELIEVE, CHALLENGE, FACE_DOWN

from helpers import JACK, TEN_DIAMONDS, card_points, check_bluff_conservation, check_conservation, rank


def deal_sizes(n: int, dealer: int, stock: int) -> tuple[list[int], int]:
    """R6.2/R18/R27: four cards each, one at a time from the seat after the dealer, while the
    stock lasts. Returns the hand sizes and the stock left."""
    sizes = [0] * n
    k = min(stock, 4 * n)
    for i in range(k):
        sizes[(dealer + 1 + i) % n] += 1
    return sizes, stock - k


class Shadow:
    """An independent tally of one hand (R10–R22), fed with the pile and the card played."""

    def __init__(self, g: Game) -> None:
        self.s = g.settings
        k = g.num_sides
        self.cards = [0] * k
        self.points = [0] * k
        self.pisti = [0] * k
        self.double = [0] * k
        self.pisti_points = [0] * k
        self.ten_d_bonus = [0] * k
        self.last = -1
        self.dealer_side = g.side_of[g.dealer]

    def play(self, g: Game, action: int) -> None:
        """Called *before* ``g.step(action)``."""
        s = self.s
        side = g.side_of[g.turn]
        pile = list(g.pile)
        last_card = g.stock_size == 0 and sum(len(h) for h in g.hands) == 1
        if pile and (rank(action) == rank(pile[-1]) or rank(action) == JACK):  # R10, R11
            self.cards[side] += len(pile) + 1
            self.points[side] += sum(card_points(c) for c in pile) + card_points(action)
            self.last = side
            if len(pile) == 1:  # R13, R14, R15 (the 4-card deal pile never has length 1)
                lone = pile[0] % 52
                kind, pts = None, 0
                if rank(action) != JACK:
                    assert rank(lone) == rank(action)
                    kind, pts = "pisti", 10
                elif rank(lone) == JACK:
                    pts = s.double_pisti
                    kind = {20: "double", 10: "pisti", 0: None}[pts]
                if kind is not None and (s.last_card_pisti or not last_card):  # R16
                    if TEN_DIAMONDS in (action, lone):  # R17
                        pts += s.ten_diamonds_pisti_bonus
                        self.ten_d_bonus[side] += 1
                    if kind == "double":
                        self.double[side] += 1
                    else:
                        self.pisti[side] += 1
                    self.pisti_points[side] += pts
            pile = []
        else:
            pile.append(action)
        if last_card and pile:  # R19: the sweep to the last capturer
            side = self.last if self.last >= 0 else self.dealer_side
            self.cards[side] += len(pile)
            self.points[side] += sum(card_points(c) for c in pile)

    def result(self) -> list[dict[str, int]]:
        best = max(self.cards)
        out = []
        for side in range(len(self.cards)):
            maj = 3 if self.cards[side] == best and self.cards.count(best) == 1 else 0  # R21
            out.append(
                {
                    "cards": self.cards[side],
                    "card_points": self.points[side],
                    "majority": maj,
                    "pisti": self.pisti[side],
                    "double_pisti": self.double[side],
                    "pisti_points": self.pisti_points[side],
                    "total": self.points[side] + maj + self.pisti_points[side],
                }
            )
        return out


def check_hand_result(settings, result: list[dict[str, int]], shadow: Shadow) -> None:
    decks = settings.decks
    cards = [r["cards"] for r in result]
    assert sum(cards) == 52 * decks
    majority = [r["majority"] for r in result]
    best = max(cards)
    tied = cards.count(best) > 1
    # R21: strictly most cards scores 3; a tie for the most gives nothing.
    assert majority == [3 if (c == best and not tied) else 0 for c in cards]
    # R23: 16/13 with one deck, 29/26 with two.
    expected = 13 * decks + (0 if tied else 3)
    assert sum(r["card_points"] + r["majority"] for r in result) == expected
    for side, r in enumerate(result):
        assert r["total"] == r["card_points"] + r["majority"] + r["pisti_points"]  # R22
        # Pişti points consistent with counts and settings (R13, R14, R17).
        if settings.double_pisti != 20:
            assert r["double_pisti"] == 0
        base = 10 * r["pisti"] + 20 * r["double_pisti"]
        extra = r["pisti_points"] - base
        assert extra % 3 == 0 and 0 <= extra <= 3 * decks
        if settings.ten_diamonds_pisti_bonus == 0:
            assert extra == 0
        assert extra == settings.ten_diamonds_pisti_bonus * shadow.ten_d_bonus[side]
    assert result == shadow.result()


def match_should_end(settings, scores: list[int]) -> bool:
    """R25/R26 (and R24/R25's single hand with target=None)."""
    if settings.target is None:
        return True
    best = max(scores)
    if best < settings.target or scores.count(best) > 1:
        return False
    runner_up = max(x for i, x in enumerate(scores) if i != scores.index(best))
    return best - runner_up >= settings.win_margin


DEALS_PER_HAND = {(2, 1): 6, (3, 1): 4, (4, 1): 3, (5, 2): 5, (6, 2): 5}  # R18, R27


def play_and_check(settings, seed: int, on_step: Callable[[Game], None] | None = None) -> int:
    """Random legal play of a whole episode with every check; returns the number of steps.
    ``on_step(game)`` is called after every step."""
    rng = random.Random(seed)
    g = Game(settings, seed=seed)
    n = settings.num_players
    check_conservation(g)
    assert [len(h) for h in g.hands] == deal_sizes(n, g.dealer, 52 * settings.decks - 4)[0]
    assert g.turn == (g.dealer + 1) % n  # R5
    assert len(g.pile) == 4 and g.history == []
    shadow = Shadow(g)
    deals = 1
    steps = 0
    first_dealer = g.dealer
    while not g.done:
        legal = g.legal_actions()
        assert legal == sorted({p % 52 for p in g.hands[g.turn]}) and legal, "R9: any card in the hand"
        action = rng.choice(legal)
        sizes = [len(h) for h in g.hands]
        stock = g.stock_size
        seat, dealer, hands_done = g.turn, g.dealer, g.hands_completed
        pile_before = list(g.pile)
        shadow.play(g, action)
        g.step(action)
        steps += 1
        check_conservation(g)
        if on_step is not None:
            on_step(g)
        if g.hands_completed != hands_done:  # the hand ended (R19-R23)
            assert sum(sizes) == 1 and stock == 0
            assert g.hands_completed == hands_done + 1 == len(g.hand_results)
            assert deals == DEALS_PER_HAND[(n, settings.decks)]
            check_hand_result(settings, g.last_hand_result, shadow)
            sums = [sum(r[i]["total"] for r in g.hand_results) for i in range(g.num_sides)]
            assert list(g.match_scores) == sums  # R24
            # R25/R26: the match ends at the first hand end that satisfies them, not before.
            assert g.done == match_should_end(settings, sums), (sums, settings)
            if g.done:
                best = max(sums)
                if sums.count(best) == 1:
                    assert g.winner == sums.index(best)
                else:
                    assert settings.target is None and g.winner is None  # a drawn single hand
                assert g.legal_actions() == []
                try:
                    g.step(action)
                except ValueError:
                    pass
                else:
                    raise AssertionError("a step after the match's end was accepted")
                break
            assert g.winner is None
            # R5: the deal passes to the next seat; a fresh deal (R6).
            assert g.dealer == (dealer + 1) % n
            assert g.dealer == (first_dealer + g.hands_completed) % n
            assert g.turn == (g.dealer + 1) % n
            exp_sizes, exp_stock = deal_sizes(n, g.dealer, 52 * settings.decks - 4)
            assert [len(h) for h in g.hands] == exp_sizes and g.stock_size == exp_stock
            assert len(g.pile) == 4 and g.history == [] and g.captured_count == [0] * g.num_sides
            assert g.public_total == g.match_scores
            shadow = Shadow(g)
            deals = 1
            continue
        assert g.history[-1] == (seat, action)
        if sum(sizes) == 1:  # R18: every hand empty, the stock is not: deal again
            assert stock > 0
            exp_sizes, exp_stock = deal_sizes(n, g.dealer, stock)
            deals += 1
            assert g.turn == (g.dealer + 1) % n  # play continues with the first player
        else:
            exp_sizes = list(sizes)
            exp_sizes[seat] -= 1
            exp_stock = stock
            nxt = (seat + 1) % n
            while exp_sizes[nxt] == 0:  # R27: a seat with an empty hand is skipped
                nxt = (nxt + 1) % n
            assert g.turn == nxt
        assert [len(h) for h in g.hands] == exp_sizes
        assert g.stock_size == exp_stock
        assert g.dealer == dealer
        # The pile: captured whole (R10, R11) or the card lies on top (R12).
        if not g.pile:
            assert pile_before and (rank(action) == rank(pile_before[-1]) or rank(action) == JACK)
        else:
            assert [p % 52 for p in g.pile] == [p % 52 for p in pile_before] + [action]
            assert not pile_before or (rank(action) != rank(pile_before[-1]) and rank(action) != JACK)
        # Per-side counters agree with the shadow tally during the hand, too.
        assert g.captured_count == shadow.cards
        assert g.card_points == shadow.points
        assert g.pisti_count == shadow.pisti and g.double_pisti_count == shadow.double
        assert g.pisti_points == shadow.pisti_points
        assert g.last_capturer == shadow.last
    return steps


class BluffShadow:
    """An independent tally of one hand (R10–R22, R29), fed with every action before the engine
    takes it; it keeps its own table pile as (physical card, seat that played it or None)."""

    def __init__(self, g: Game) -> None:
        self.s = g.settings
        k = g.num_sides
        self.side_of = g.side_of
        self.pile = [(p, None) for p in g.pile]
        self.cards, self.points = [0] * k, [0] * k
        self.pisti, self.double, self.pisti_points = [0] * k, [0] * k, [0] * k
        self.bluff_points = [0] * k
        self.counts = {name: [0] * k for name in (
            "bluff_claims", "bluff_believed", "bluff_challenged_true", "bluff_challenged_false")}
        self.last = -1
        self.dealer_side = g.side_of[g.dealer]
        self.pending = None  # (claimant, physical card, was it the hand's last card)

    def expected_legal(self, g: Game) -> list[int]:
        if self.pending is not None:
            return [BELIEVE, CHALLENGE]
        cards = sorted({p % 52 for p in g.hands[g.turn]})
        last_card = g.stock_size == 0 and sum(len(h) for h in g.hands) == 1
        if len(self.pile) == 1 and (self.s.last_card_pisti or not last_card):  # R29, R16
            return cards + [FACE_DOWN + c for c in cards]
        return cards

    def expected_answerer(self) -> int:
        return self.pile[0][1]

    def take(self, side: int, cards: list[int]) -> None:
        self.cards[side] += len(cards)
        self.points[side] += sum(card_points(c) for c in cards)
        self.last = side

    def sweep(self) -> None:  # R19
        if self.pile:
            side = self.last if self.last >= 0 else self.dealer_side
            self.cards[side] += len(self.pile)
            self.points[side] += sum(card_points(c) for c, _ in self.pile)
            self.pile = []

    def play(self, g: Game, action: int) -> None:
        seat = g.turn
        side = self.side_of[seat]
        s = self.s
        if action >= BELIEVE:
            claimant, p, final = self.pending
            cside = self.side_of[claimant]
            lone = self.pile[0][0]
            stake = 20 if s.bluff_jack_double and rank(lone) == JACK else 10
            if action == BELIEVE or rank(p) == rank(lone):
                points = stake if action == BELIEVE else 2 * stake
                self.bluff_points[cside] += points
                self.pisti[cside] += 1
                self.counts["bluff_believed" if action == BELIEVE else "bluff_challenged_true"][cside] += 1
                self.take(cside, [lone, p])
                self.pile = []
            else:
                self.bluff_points[side] += 2 * stake  # the challenger's side alone
                self.counts["bluff_challenged_false"][cside] += 1
                self.pile.append((p, claimant))
            self.pending = None
            if final:
                self.sweep()
            return
        last_card = g.stock_size == 0 and sum(len(h) for h in g.hands) == 1
        p = next(q for q in (action % FACE_DOWN, action % FACE_DOWN + 52) if q in g.hands[seat])
        if action >= FACE_DOWN:
            self.counts["bluff_claims"][side] += 1
            self.pending = (seat, p, last_card)
            return
        pile = self.pile
        if pile and (rank(p) == rank(pile[-1][0]) or rank(p) == JACK):  # R10, R11
            if len(pile) == 1:  # R13, R14, R16, R17
                lone = pile[0][0]
                pts, kind = 0, None
                if rank(p) != JACK:
                    pts, kind = 10, "pisti"
                elif rank(lone) == JACK:
                    pts = s.double_pisti
                    kind = {20: "double", 10: "pisti", 0: None}[pts]
                if kind is not None and (s.last_card_pisti or not last_card):
                    if TEN_DIAMONDS in (p % 52, lone % 52):
                        pts += s.ten_diamonds_pisti_bonus
                    (self.double if kind == "double" else self.pisti)[side] += 1
                    self.pisti_points[side] += pts
            self.take(side, [c for c, _ in pile] + [p])
            self.pile = []
        else:
            pile.append((p, seat))
        if last_card:
            self.sweep()

    def result(self) -> list[dict[str, int]]:
        best = max(self.cards)
        out = []
        for side in range(len(self.cards)):
            maj = 3 if self.cards[side] == best and self.cards.count(best) == 1 else 0
            r = {"cards": self.cards[side], "card_points": self.points[side], "majority": maj,
                 "pisti": self.pisti[side], "double_pisti": self.double[side],
                 "pisti_points": self.pisti_points[side],
                 "total": self.points[side] + maj + self.pisti_points[side] + self.bluff_points[side],
                 "bluff_points": self.bluff_points[side]}
            r.update({name: v[side] for name, v in self.counts.items()})
            out.append(r)
        return out


def play_and_check_bluff(settings, seed: int, on_step: Callable[[Game], None] | None = None) -> int:
    """Random play of a whole episode with bluffs and every check; returns the claims made.
    ``on_step(game)`` is called after every step."""
    rng = random.Random(seed)
    g = Game(settings, seed=seed)
    shadow = BluffShadow(g)
    claims = 0
    while not g.done:
        legal = g.legal_actions()
        assert legal == shadow.expected_legal(g), "R9/R29: the legal actions"
        action = rng.choice(legal)
        seat, hands_done = g.turn, g.hands_completed
        shadow.play(g, action)
        g.step(action)
        if FACE_DOWN <= action < BELIEVE:
            claims += 1
            assert g.turn == shadow.expected_answerer() and g.pending_claim[0] == seat  # R29
        if g.hands_completed != hands_done:
            result = g.last_hand_result
            cards = [r["cards"] for r in result]
            tied = cards.count(max(cards)) > 1
            assert sum(cards) == settings.num_cards
            assert sum(r["card_points"] + r["majority"] for r in result) == 13 * settings.decks + (0 if tied else 3)  # R23
            for r in result:
                assert r["total"] == r["card_points"] + r["majority"] + r["pisti_points"] + r["bluff_points"]  # R22
                assert r["bluff_claims"] == r["bluff_believed"] + r["bluff_challenged_true"] + r["bluff_challenged_false"]
                assert r["pisti"] >= r["bluff_believed"] + r["bluff_challenged_true"]
            assert result == shadow.result()
            assert list(g.match_scores) == [sum(h[i]["total"] for h in g.hand_results) for i in range(g.num_sides)]
            shadow = BluffShadow(g)
        check_bluff_conservation(g, shadow)
        if on_step is not None:
            on_step(g)
    return claims


class ObservationCheck:
    """R30/R31 after a step: the observation of the seat to move must not change when every
    card it may not know is dealt again ([`Game.determinize`][pisti_env.game.Game.determinize], a world consistent with what
    the seat has seen). ``worlds_differing`` counts the checks whose redealt world really
    differed in another seat's hand, so a run can show the check was not vacuous."""

    def __init__(self, settings, seed: int, every: int = 1) -> None:
        from pisti_env import ObservationEncoder

        self.encoder = ObservationEncoder(settings)
        self.rng = random.Random(seed)
        self.every = max(1, every)
        self.steps = self.checks = self.worlds_differing = 0
        self.game: Game | None = None

    def __call__(self, g: Game) -> None:
        self.game = g
        self.steps += 1
        if g.done or self.steps % self.every:
            return
        seat = g.turn
        world = g.determinize(seat, self.rng)
        seen, other = self.encoder.encode(g, seat), self.encoder.encode(world, seat)
        assert (seen == other).all(), f"R30/R31: seat {seat}'s observation depends on cards it cannot know"
        self.checks += 1
        self.worlds_differing += any(sorted(world.hands[s]) != sorted(g.hands[s]) for s in range(g.num_players) if s != seat)
