"""R29's claim, solved: the equilibrium of the small game a claim chance starts, read off a
seat's observation, as the bluff policy's claims and answers (``solved_claims``).

Self-play PPO on the two mixed decisions of the bluff variant goes round in circles (docs/research/
bluff-exploitability.md): a head trained against the other's current play becomes a best response to
it, and a best response to the shipped policy takes its edge from whatever the heads do not
balance. This module plays the balance itself.

**The claim game.** A lone card of rank ``r`` lies on the table; the claimant holds ``k``
cards of that rank, the answerer (the seat that played the lone card) ``j``. Both are drawn
from the cards neither side can see: ``m`` cards of rank ``r`` among ``T`` hidden cards in all,
the claimant's ``h_C`` and the answerer's ``h_A`` of them in hand, uniformly (our model: it
forgets what earlier play may say about a hand). The claimant, holding the rank, claims (a
true claim scores the stake ``s`` believed and ``F·s`` challenged, ``F`` =
``CHALLENGE_FACTOR``; both beat a face-up pişti's ``s``); without it, it bluffs with
probability ``β``. The answerer, holding ``j``, challenges with probability ``c_j``. In the
score difference, against playing face up, a claim believed is worth ``s + A`` to the claimant
(``A``, the *capture value*: a believed claim takes both cards, and the answerer must then lead
onto an empty table, which hands the claimant the next claim chance), challenged and true
``F·s + A``, and a bluff caught ``-F·s`` (its card lies face up on the pile, much as a face-up
play would). So, with ``a = A/s``:

* the claimant gains by bluffing unless its bluffs are challenged at least ``(1+a)/(1+F+a)``
  of the time (a third with ``A = 0``), averaged over the answerer's ``j`` as the claimant
  weighs them;
* the answerer gains by challenging where more than ``(F-1)/(2F+a)`` (a quarter with
  ``A = 0``) of the claims it sees are bluffs.

``A`` is a number of points given to ``SolvedClaims`` (``claim_capture_value``), with
one of its own for the hand's last deal if given (``claim_capture_value_last_deal``: with the
stock empty there is no next deal to lead, and R19 gives the last cards to the last capturer,
so a capture is worth less there): the stakes alone (``A = 0``) leave a believed bluff's
capture free, and a best response bluffs at that margin (docs/research/bluff-exploitability.md).

The answerer's equilibrium challenges the ``j`` that make a bluff likeliest first (the more of
the rank it holds, the fewer the claimant can), fully until the claimant's bluffs are deterred
on average; one ``j`` is mixed. The claimant's ``β`` is the one that leaves that answerer
indifferent; where even challenging every ``j`` worth it cannot deter, it always bluffs, and
where the answerer holding every hidden card of the rank already deters (such a claim is a
sure bluff, challenged always), it never does. A lone Jack with ``bluff_jack_double`` doubles
``s``. What else the cards do to later play is left out.

What each seat reads (its own observation only, R30): the lone rank, how many of it it holds
and how many it has not seen, how many cards it has not seen in all, and the two hand sizes.
Each side counts ``m`` and ``T`` from what it sees; they agree but for cards one side took
unseen. One fact beats the model: when the shown stock-bottom card (R28) is of the lone rank,
the stock is empty and the card is not in the answerer's hand, the claimant holds it or has
just played it face down (with 2 players; with more, where the claimant dealt), so the claim
is true and is believed. (The claimant's mirror of it, knowing the answerer holds that card,
is left to the model.)
With partnerships (R4) partners sit apart, so the answerer is an opponent.
"""

from __future__ import annotations

from typing import Any

import torch

from ..rules.cards import JACK, NUM_CARD_IDS, NUM_RANKS
from ..views.observation import CARDS_SCALE, HAND_SCALE, ObservationLayout
from ..rules.scoring import BLUFF_STAKE, CHALLENGE_FACTOR, JACK_STAKE_FACTOR
from .spec import MAX_CAPTURE_VALUE, is_capture_value


def thresholds(capture: torch.Tensor | float = 0.0) -> tuple[Any, Any, Any]:
    """The claim game's three thresholds, for a believed claim's capture worth ``capture``
    stakes beyond the stake itself (0: the stakes alone). With stake ``s``, ``F`` =
    ``CHALLENGE_FACTOR`` and ``a = capture``, relative to playing face up: believed ``(1+a)s``,
    challenged and true ``(F+a)s``, caught ``-F s``. Returns ``(deter, bluff_share, odds)``:

    * ``deter``: the claimant's bluff gains nothing once challenged this often,
      ``(1-c)(1+a) = c F``;
    * ``bluff_share``: the answerer gains by challenging where more than this share ``p`` of
      the claims are bluffs, ``-p F + (1-p)(F+a) < 1+a`` (the claimant's side of it);
    * ``odds``: where P(k = 0, j) / P(k >= 1, j) exceeds this, challenging at ``j`` is worth its
      cost in challenged true claims (and ``beta * odds_j = odds`` makes the answerer
      indifferent there).
    """
    f = float(CHALLENGE_FACTOR)
    return (1.0 + capture) / (1.0 + f + capture), (f - 1.0) / (2.0 * f + capture), (f - 1.0) / (f + 1.0 + capture)


# With the stakes alone: a third, a quarter, and odds of one in three.
DETER, BLUFF_SHARE, ODDS = thresholds(0.0)


def _log_choose(n: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """log C(n, k), -inf where k < 0 or k > n."""
    valid = (k >= 0) & (k <= n)
    n, k = n.clamp_min(0), k.clamp_min(0)
    value = torch.lgamma(n + 1) - torch.lgamma(k + 1) - torch.lgamma((n - k).clamp_min(0) + 1)
    return torch.where(valid, value, torch.full_like(value, -torch.inf))


def hypergeometric(x: torch.Tensor, total: torch.Tensor, marked: torch.Tensor, draws: torch.Tensor) -> torch.Tensor:
    """P(exactly ``x`` marked cards among ``draws`` drawn without replacement from ``total``
    cards of which ``marked`` are marked); broadcasts, 0 where impossible."""
    log_p = _log_choose(marked, x) + _log_choose(total - marked, draws - x) - _log_choose(total, draws)
    return torch.exp(torch.nan_to_num(log_p, nan=-torch.inf))


def solve(hidden: torch.Tensor, of_rank: torch.Tensor, claimant_hand: torch.Tensor, answerer_hand: torch.Tensor,
          copies: int, capture: torch.Tensor | float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """The claim game's equilibrium for each row: ``(bluff, challenge)``, the claimant's
    probability of bluffing without the rank (B,) and the answerer's probability of challenging
    holding ``j`` of it (B, copies + 1), for ``j = 0 … copies``.

    Args:
        hidden: ``T``, the cards neither side sees, both hands included (B,).
        of_rank: ``m``, the lone rank's cards among them (B,).
        claimant_hand: ``h_C``, the claimant's cards in hand at its claim chance (B,).
        answerer_hand: ``h_A`` (B,).
        copies: the most cards of one rank that can be hidden (4 a deck, less the lone one).
        capture: what a believed claim's capture is worth beyond its stake, in stakes (B,) or
            one for all (``thresholds``).
    """
    out_dtype = hidden.dtype if hidden.dtype.is_floating_point else torch.float32
    dtype = torch.float64  # the fill below compares running sums: float32's rounding would pick the wrong j
    shape = (-1, 1, 1)
    k = torch.arange(copies + 1, dtype=dtype, device=hidden.device)
    ks, js = k.view(1, -1, 1), k.view(1, 1, -1)
    t, m, hc, ha = (x.to(dtype).view(shape) for x in (hidden, of_rank, claimant_hand, answerer_hand))
    capture = torch.as_tensor(capture, dtype=dtype, device=hidden.device).expand(t.shape[0])
    deter, _, odds = thresholds(capture)
    # P(k, j): the claimant's hand drawn first, the answerer's from what is left.
    joint = hypergeometric(ks, t, m, hc) * hypergeometric(js, t - hc, m - ks, ha)  # (B, k, j)
    without = joint[:, 0, :]  # P(k = 0, j)
    holding = joint[:, 1:, :].sum(1)  # P(k >= 1, j)
    need = without.sum(1) * deter  # how much challenged bluffing deters, in P(k = 0, j) mass
    # A j where the claimant cannot hold the rank: every claim there is a bluff, challenge it.
    sure = holding <= 1e-12
    challenge = sure.to(dtype)
    deterred = (challenge * without).sum(1)
    done = deterred >= need - 1e-9
    bluff = torch.zeros_like(need)  # deterred by sure bluffs alone: never bluff
    for j in range(copies, -1, -1):  # the likeliest bluffs first: the more the answerer holds
        worth = ~done & ~sure[:, j] & (without[:, j] > odds * holding[:, j])
        share = ((need - deterred) / without[:, j].clamp_min(1e-30)).clamp(0.0, 1.0)
        challenge[:, j] = torch.where(worth, share, challenge[:, j])
        deterred = deterred + torch.where(worth, share * without[:, j], torch.zeros_like(share))
        reached = worth & (deterred >= need - 1e-9)
        # The answerer at this j is indifferent: beta * odds_j = odds.
        bluff = torch.where(reached, odds * holding[:, j] / without[:, j].clamp_min(1e-30), bluff)
        done = done | reached
    bluff = torch.where(done, bluff, torch.ones_like(bluff))  # never deterred: always bluff
    return bluff.clamp(0.0, 1.0).to(out_dtype), challenge.to(out_dtype)


class SolvedClaims:
    """The claims and answers of ``solve``, read off a batch of observations of one
    observation layout (a pure function of them: no parameters).

    ``__call__`` gives, per row, the log-odds of playing face down at a claim chance, the
    face-down cards allowed (holding the lone rank: only those of it, a true claim; else every
    card, the bluff's card left to the card logits) and the (believe, challenge) logits of an
    answer. Rows that are neither get finite values that their action mask makes moot.
    """

    LOG_ODDS_CAP = 30.0  # "always" and "never" as finite log-odds (probability 1 - 1e-13)

    def __init__(self, layout: ObservationLayout, capture_value: float = 0.0,
                 last_deal_capture_value: float | None = None) -> None:
        if not layout.settings.bluff:
            raise ValueError("solved claims need the bluff variant (R29)")
        given = [("capture_value", capture_value)]
        if last_deal_capture_value is not None:
            given.append(("last_deal_capture_value", last_deal_capture_value))
        for name, value in given:
            if not is_capture_value(value):
                raise ValueError(f"{name} must be a number of points in [0, {MAX_CAPTURE_VALUE:g}], got {value!r}")
        self.capture_value = float(capture_value)
        # On the hand's last deal (the stock empty) a capture leads to less: no next deal's
        # empty table to lead onto, and R19 gives the last cards to the last capturer.
        self.last_deal_capture_value = self.capture_value if last_deal_capture_value is None \
            else float(last_deal_capture_value)
        self.jack_stakes = JACK_STAKE_FACTOR if layout.settings.bluff_jack_double else 1
        index = layout.feature_index
        self.card_features = layout.num_card_features
        self.hand, self.top, self.unseen = index["hand"], index["pile_top"], index["unseen"]
        self.stock_bottom = index["stock_bottom"]
        self.players = n = layout.num_players
        self.played_by = [index[f"played_by_seat_{s}"] for s in range(n)]
        self.hand_sizes = layout.by_name["hand_sizes"].slice
        self.stock = layout.by_name["stock_size"].slice
        self.claimant = layout.by_name["claimant"].slice
        self.dealer = layout.by_name["dealer"].slice
        # The most hidden cards of the lone rank: every copy of it but the lone card.
        self.copies = layout.settings.decks * (NUM_CARD_IDS // NUM_RANKS) - 1

    def counts(self, observation: torch.Tensor, cards: torch.Tensor) -> dict[str, torch.Tensor]:
        """The claim game's counts each row's seat reads (B,) from its observation (B, size) and
        card block (B, 52, K): ``hidden`` (T: its own hand and every card it cannot identify),
        ``of_rank`` (m: the lone rank's cards among them), ``own`` (those in its hand: k at a
        claim chance, j at an answer), ``claimant_hand`` and ``answerer_hand`` (h_C at the
        claim chance, its face-down card included; h_A), ``answering`` (bool: a claim waits),
        and for ``__call__`` ``held`` and ``same_rank`` (B, 52), the stock's size and the
        stock-bottom facts."""
        obs = observation.float()
        cards = cards.float()
        top = cards[:, :, self.top]  # (B, 52): the lone card, where the pile has one
        is_rank = top.view(-1, NUM_CARD_IDS // NUM_RANKS, NUM_RANKS).sum(1).clamp_max(1.0)  # (B, 13)
        same_rank = is_rank.repeat(1, NUM_CARD_IDS // NUM_RANKS)  # (B, 52): cards of the lone rank
        held = cards[:, :, self.hand]
        unseen = cards[:, :, self.unseen]
        own = (held * same_rank).sum(1)
        sizes = (obs[:, self.hand_sizes] * HAND_SCALE).round()
        claimant = obs[:, self.claimant]
        answering = claimant.sum(1) > 0
        # Whose hand is whose: at a claim chance, mine and the lone card's player's; at an
        # answer, the claimant's (one more than now: its face-down card) and mine.
        lone_player = torch.einsum("bc,bcs->bs", top, cards[:, :, self.played_by])  # (B, seats), one-hot
        mine = sizes[:, 0]
        other = torch.where(answering, (claimant * sizes).sum(1) + 1, (lone_player * sizes).sum(1))
        return {
            "hidden": unseen.sum(1) + mine,
            "of_rank": (unseen * same_rank).sum(1) + own,
            "own": own,
            "claimant_hand": torch.where(answering, other, mine),
            "answerer_hand": torch.where(answering, mine, other),
            "answering": answering,
            "held": held,
            "same_rank": same_rank,
            "stock": (obs[:, self.stock] * CARDS_SCALE).round().squeeze(1),
            "stock_bottom_of_rank": (cards[:, :, self.stock_bottom] * same_rank).sum(1) > 0,
            "claimant_dealt": (claimant * obs[:, self.dealer]).sum(1) > 0,
        }

    def __call__(self, observation: torch.Tensor, cards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(claim_odds (B, 1), face_down_cards (B, 52) bool, answers (B, 2))`` from the
        observations (B, size) and their card block (B, 52, K)."""
        c = self.counts(observation, cards)
        stake = BLUFF_STAKE * torch.where(c["same_rank"][:, JACK] > 0, float(self.jack_stakes), 1.0)  # R29
        capture = torch.where(c["stock"] == 0, self.last_deal_capture_value, self.capture_value)
        bluff, challenge = solve(c["hidden"], c["of_rank"], c["claimant_hand"], c["answerer_hand"], self.copies,
                                 capture / stake)

        # The claim: holding the rank, a true claim with one of it; else bluff with P = bluff.
        held, own = c["held"], c["own"]
        holds = own > 0
        p_down = torch.where(holds, torch.ones_like(bluff), bluff)
        odds = torch.logit(p_down, eps=1e-13).clamp(-self.LOG_ODDS_CAP, self.LOG_ODDS_CAP)[:, None]
        face_down = torch.where(holds[:, None], (held > 0) & (c["same_rank"] > 0), held > 0)

        # The answer: challenge with the equilibrium's P for the j held, or believe a claimant
        # known to hold the rank (R28's shown card of the rank, dealt to it).
        j = own.long().clamp(0, self.copies)
        p_challenge = challenge.gather(1, j[:, None]).squeeze(1)
        dealt_it = c["claimant_dealt"] if self.players > 2 else c["answering"]
        known_true = c["stock_bottom_of_rank"] & (c["stock"] == 0) & dealt_it
        p_challenge = torch.where(known_true, torch.zeros_like(p_challenge), p_challenge)
        p = p_challenge.clamp(1e-13, 1 - 1e-13)
        answers = torch.stack([torch.log1p(-p), torch.log(p)], 1)
        return odds, face_down, answers
