"""The batched form of ``expert`` (`ExpertAgent.act_batch`): the same tie set of best
cards for a whole batch of the batched engine's observations, ties drawn at random.

Every quantity ``expert`` reads from its [`SeatView`][pisti_env.SeatView] is in the
seat's observation (R30–R31): its hand, the unseen cards (the card counting), the pile's known
cards, top card, size and never-turned cards, the hand sizes, the stock and the cards each side
captured. The rules of thumb (`pisti_env.agents.expert`) are computed for all 52 cards at
once in float64, operation for operation in the order the Python player computes them, so the
values are the same doubles and the tie sets the same sets (``tests/batched/test_expert_batched.py``
checks them decision by decision). The exact endgame (two players, stock empty) is solved in
Python for the rows where it applies, by the very function the Python player calls
(`endgame_choices`): a few rows per batch step, late in a hand.

Covers the games of `batched_form_covers` (one deck, no bluff
variant, no shown stock-bottom card). This module imports torch; `pisti_env.agents.expert`
imports it only when a batched form is asked for, so ``import pisti_env`` never does.
"""

from __future__ import annotations

import math

import torch

from ..rules.cards import HAND_SIZE, JACK, NUM_CARD_IDS, NUM_RANKS, RANK
from ..views.observation import CARDS_SCALE, HAND_SCALE, PILE_HIDDEN_SCALE, ObservationLayout
from ..rules.settings import Settings
from ..rules.scoring import POINTS
from .expert import TIE, batched_form_covers, endgame_choices
from .greedy_batched import pisti_values


# Solved endgame positions kept between calls, at most (then forgotten at once): ~100 MB.
MEMO_LIMIT = 500_000


class BatchedExpert:
    """``expert`` (the Python `ExpertAgent` with the same
    options) for a batch of observations: `best_cards` is the Python player's
    ``best_actions`` for every row, and calling it draws one of them uniformly.

    Args:
        settings: the game the observations come from (covered by ``batched_form_covers``).
        card_weight, jack_keep, point_keep, lead_bonus, endgame_worlds: as ``ExpertAgent``'s.
        device: where the lookup tables live (that of the observations).
    """

    def __init__(
        self,
        settings: Settings,
        card_weight: float = 0.2,
        jack_keep: float = 2.5,
        point_keep: float = 0.3,
        lead_bonus: float = 0.5,
        endgame_worlds: int = 6,
        device: torch.device | str = "cpu",
    ) -> None:
        if not batched_form_covers(settings):
            raise ValueError("the batched expert plays one deck without the bluff variant (R29) or the shown "
                             "stock-bottom card (R28)")
        self.settings = settings
        self.layout = ObservationLayout(settings)
        self.device = torch.device(device)
        self.card_weight, self.jack_keep, self.point_keep, self.lead_bonus = card_weight, jack_keep, point_keep, lead_bonus
        self.endgame_worlds = endgame_worlds
        f64 = dict(dtype=torch.float64, device=self.device)
        self.rank = torch.tensor(RANK[:NUM_CARD_IDS], device=self.device)
        self.points = torch.tensor(POINTS[:NUM_CARD_IDS], **f64)
        self.is_jack = self.rank == JACK
        self.of_rank = (self.rank[:, None] == torch.arange(NUM_RANKS, device=self.device)).to(torch.float64)  # (52, 13)
        # What the next seat scores by taking a card left alone on the table with one of its rank
        # (R13, R17): each card's pişti on itself. R16 (none on the hand's last card) is per row.
        ids = torch.arange(NUM_CARD_IDS, device=self.device)
        alone = torch.ones(NUM_CARD_IDS, dtype=torch.bool, device=self.device)
        self.self_pisti = pisti_values(settings, self.rank, ids, alone, ~alone).diagonal().to(torch.float64)
        n = settings.num_players
        # The next seat's gains are the mover's losses unless it is a partner (never, R4).
        self.sign = -1.0 if settings.side_of(1) != settings.side_of(0) else 1.0
        # Hands the endgame can enumerate: C(unseen, free) for the few sizes a hand can have.
        self.worlds = torch.tensor([[math.comb(u, f) for f in range(HAND_SIZE + 1)] for u in range(NUM_CARD_IDS + 1)],
                                   dtype=torch.int64, device=self.device)
        self._endgame = endgame_worlds > 0 and n == 2
        # Endgame positions solved so far (a pure function of the position and the settings):
        # the later decisions of a hand revisit the positions of the earlier ones.
        self._memo: dict = {}

    def __call__(self, observation: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """(B,) one of each row's best cards, uniformly (the Python player draws with its own
        generator; here ``generator``)."""
        best = self.best_cards(observation, mask[:, :NUM_CARD_IDS])
        noise = torch.rand(best.shape, generator=generator, device=best.device)
        return noise.masked_fill(~best, -1.0).argmax(1)

    def best_cards(self, observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B, 52) bool: for every row, the cards the Python expert's ``best_actions`` lists
        (``mask``: the legal card ids, the hand)."""
        facts = self._facts(observation)
        values = self._values(facts)
        values = values.masked_fill(~mask, -math.inf)
        best = mask & (values > values.max(1, keepdim=True).values - TIE)
        if self._endgame:
            self._solve_endgames(mask, facts, best)
        return best

    def _facts(self, observation: torch.Tensor) -> dict[str, torch.Tensor]:
        """What ``expert`` reads from its view, per row (float64 counts, exact)."""
        layout, obs = self.layout, observation.to(torch.float64)

        def count(name: str, scale: float) -> torch.Tensor:
            return (obs[:, layout[name]] * scale).round()

        unseen = obs[:, layout["unseen"]]
        unseen_total = unseen.sum(1)
        known_pile = obs[:, layout["pile_face_up"]] + obs[:, layout["pile_public_jack"]]
        top = obs[:, layout["pile_top"]]
        return {
            "unseen": unseen > 0,
            "unseen_total": unseen_total,
            "unseen_rank": unseen @ self.of_rank,  # (B, 13)
            "unseen_points": unseen @ self.points,
            "pile_points": known_pile @ self.points,
            "has_top": top.sum(1) > 0,
            "top": top.argmax(1),
            "hand_sizes": count("hand_sizes", HAND_SCALE),
            "stock": count("stock_size", CARDS_SCALE)[:, 0],
            "size": count("pile_size", CARDS_SCALE)[:, 0],
            "pile_hidden": count("pile_hidden", PILE_HIDDEN_SCALE)[:, 0],
            "captured": count("captured_count", CARDS_SCALE),
            "last_capturer": obs[:, layout["last_capturer"]].argmax(1),  # relative side; num_sides: nobody
        }

    def _hold(self, unseen_of_rank: torch.Tensor, unseen_total: torch.Tensor, hand_size: torch.Tensor) -> torch.Tensor:
        """`hold_probability` elementwise, factor by factor in
        the same order (so the same doubles)."""
        miss = torch.ones_like(unseen_of_rank)
        for i in range(HAND_SIZE):
            factor = (unseen_total - unseen_of_rank - i) / (unseen_total - i)
            miss = torch.where(hand_size > i, miss * factor, miss)
        sure = hand_size > unseen_total - unseen_of_rank
        never = (unseen_of_rank <= 0) | (hand_size <= 0)
        return torch.where(never, 0.0, torch.where(sure, 1.0, 1.0 - miss))

    def _values(self, f: dict[str, torch.Tensor]) -> torch.Tensor:
        """(B, 52) the rules of thumb's value of playing each card (expert's ``capture`` and
        ``discard``), whether or not it is held."""
        s, n = self.settings, self.settings.num_players
        P, is_jack = self.points[None, :], self.is_jack[None, :]
        hidden_mean = torch.where(f["unseen_total"] > 0, f["unseen_points"] / f["unseen_total"], 0.0)
        pile_value = (f["pile_points"] + f["pile_hidden"] * hidden_mean)[:, None]
        size = f["size"][:, None]
        hand_sizes = f["hand_sizes"]
        left = hand_sizes.sum(1) + f["stock"]  # cards still to be played this hand
        last_card = left == 1
        my_future = hand_sizes[:, 0] - 1 + torch.div(f["stock"], n, rounding_mode="floor")
        majority_settled = f["captured"].max(1).values * 2 > s.num_cards  # R21
        # (Products with 0/1, not torch.where of two Python floats: that would be float32.)
        w = ((~majority_settled).to(torch.float64) * self.card_weight)[:, None]
        jack_keep = ((my_future > 0).to(torch.float64) * self.jack_keep)[:, None]
        hold = self._hold(f["unseen_rank"], f["unseen_total"][:, None], hand_sizes[:, 1:2])  # (B, 13)
        p_card = hold[:, self.rank]  # (B, 52) the next seat holds the card's rank
        p_jack = hold[:, JACK][:, None]
        top, has_top = f["top"], f["has_top"]
        top_rank = self.rank[top]

        # Capture (R10, R11): the pile, the card, any pişti, the majority share, a Jack spent.
        pisti = pisti_values(self.settings, self.rank, top, f["size"] == 1, last_card).to(torch.float64)
        spent = is_jack & ~((f["size"] == 1) & (top_rank == JACK))[:, None]
        capture = pile_value + P + pisti + w * (size + 1)
        capture = capture - torch.where(spent, jack_keep, 0.0)
        capture = torch.where(last_card[:, None], capture, capture + self.lead_bonus)

        # Discard: what the next seat may take. A lone card risks a pişti (R13, R14).
        lone_pisti = self.self_pisti[None, :]  # (not read for Jacks: a Jack on a lone Jack is double_pisti)
        if not s.last_card_pisti:  # R16: the take would be the hand's very last card
            lone_pisti = lone_pisti * (left != 2)[:, None]
        lone_gift = torch.where(is_jack, float(s.double_pisti) + P, lone_pisti + P) + 2 * w
        lone_p = torch.where(is_jack, p_jack, p_card)
        p_rank = torch.where(is_jack, 0.0, p_card)
        pile_gift = pile_value + P + w * (size + 2)
        pile_p = p_rank + (1.0 - p_rank) * torch.where(pile_gift >= self.jack_keep, p_jack, 0.0)
        empty = (size == 0)
        p = torch.where(empty, lone_p, pile_p)
        gift = torch.where(empty, lone_gift, pile_gift)
        discard = self.sign * p * gift - self.point_keep * P
        discard = torch.where(is_jack, discard - jack_keep, discard)

        takes = has_top[:, None] & ((self.rank[None, :] == top_rank[:, None]) | is_jack)
        return torch.where(takes, capture, discard)

    def _solve_endgames(self, mask: torch.Tensor, f: dict[str, torch.Tensor], best: torch.Tensor) -> None:
        """Two players, stock empty, no never-turned card in the pile: the rows with a choice
        whose other hand is one of at most ``endgame_worlds`` get the exact endgame's best cards
        (in place)."""
        free = f["hand_sizes"][:, 1].long()
        worlds = self.worlds[f["unseen_total"].long(), free.clamp(0, HAND_SIZE)]
        rows = ((f["stock"] == 0) & (f["pile_hidden"] == 0) & (worlds > 0) & (worlds <= self.endgame_worlds)
                & (mask.sum(1) > 1))  # a single card is played whatever the endgame says
        if not bool(rows.any()):
            return
        at = rows.nonzero().squeeze(1)
        columns = {
            "hand": mask[at], "unseen": f["unseen"][at], "top": f["top"][at], "has_top": f["has_top"][at],
            "size": f["size"][at], "pile_points": f["pile_points"][at], "last": f["last_capturer"][at],
            "captured": f["captured"][at], "free": free[at],
        }
        lists = {k: v.tolist() for k, v in columns.items()}
        cards = range(NUM_CARD_IDS)
        if len(self._memo) > MEMO_LIMIT:
            self._memo.clear()
        for j, row in enumerate(at.tolist()):
            legal = [c for c in cards if lists["hand"][j][c]]
            unseen = [c for c in cards if lists["unseen"][j][c]]
            last = lists["last"][j]
            choice = endgame_choices(
                legal, unseen, int(lists["free"][j]), [], lists["top"][j] if lists["has_top"][j] else None,
                int(lists["size"][j]), int(lists["pile_points"][j]), None if last == 2 else last,
                (int(lists["captured"][j][0]), int(lists["captured"][j][1])), self.settings, self.endgame_worlds,
                self._memo,
            )
            best[row] = False
            best[row, choice] = True
