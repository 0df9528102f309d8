"""The hand's frame for every game of the batch: new hands (R5–R8, R28), deals (R6.2, R18)
and the end of a hand (R19–R26).

Pure functions of ``(tables, state, ...)``. Those whose names end in ``_`` write in place
the fields of the state they are given that their docstrings name (``code``, and ``deck``
for all but `deal_`): give them only a state whose those fields the caller owns
(`pisti_env.batched.state.owned_copy`, or a sub-batch from
`pisti_env.batched.state.take`, whose tensors are fresh).
"""

from __future__ import annotations

import torch

from ..rules import locations as loc
from ..rules.cards import HAND_SIZE, JACK, NUM_CARD_IDS, TABLE_SIZE
from ..rules.counters import COUNTED_RESULT_ROWS, BLUFF_RESULT_ROWS, Counter
from ..rules.scoring import MAJORITY_POINTS
from .decks import first_dealers, hashed_decks
from .state import CODE_DTYPE, CODE_WIDTH, BatchState, put_, take
from .tables import Tables

_IN_STOCK = loc.STOCK * CODE_WIDTH + loc.NOBODY  # a card in the stock was never played
_STOCK_SHOWN = loc.STOCK_SHOWN * CODE_WIDTH + loc.NOBODY  # R28: the shown stock bottom, not yet dealt
_SHOWN_IN_HAND = (loc.HAND_SHOWN - loc.HAND) * CODE_WIDTH  # from a seat's hand code to its shown-card code


def blank_state(t: Tables) -> BatchState:
    """B games before their first deal (fresh tensors: the caller owns them)."""
    B, dev = t.batch_size, t.device
    zeros = torch.zeros(B, dtype=torch.int64, device=dev)
    return BatchState(
        code=torch.full((B, NUM_CARD_IDS), _IN_STOCK, dtype=CODE_DTYPE, device=dev),
        deck=torch.zeros(B, NUM_CARD_IDS, dtype=torch.int64, device=dev),
        stock_pos=zeros,
        turn=zeros,
        dealer=zeros,
        in_hands=zeros,
        hand_sizes=torch.zeros(B, t.num_players, dtype=torch.int64, device=dev),
        top=zeros,
        pile_size=zeros,
        pile_hidden=zeros,
        pile_points_public=zeros,
        pile_points_hidden=zeros,
        last_capturer=zeros - 1,
        side_counts=torch.zeros(B, t.num_rows, t.num_sides, dtype=torch.int64, device=dev),
        reward_base=torch.zeros(B, t.num_sides, dtype=torch.int64, device=dev),
        hands_completed=zeros,
        episode=zeros,
        attempt=zeros,
        slot=torch.arange(B, device=dev),
        claimant=zeros - 1,
        claim_card=zeros - 1,
    )


def deal_(t: Tables, owned: BatchState, mask: torch.Tensor) -> BatchState:
    """R6.2/R18: four cards to each seat, one at a time from the first player, where ``mask``;
    with one deck every deal is a full round. Writes ``owned.code`` in place."""
    n = t.num_players
    per_deal = HAND_SIZE * n
    order = torch.arange(per_deal, device=t.device)
    cards = owned.deck.gather(1, (owned.stock_pos[:, None] + order).clamp(max=NUM_CARD_IDS - 1))
    first = t.next_seat.index_select(0, owned.dealer)
    dealt = t.deal_codes.index_select(0, first)  # (B, 4n): into the receivers' hands
    current = owned.code.gather(1, cards)
    # R28: the shown stock-bottom card stays in view in the hand that receives it.
    dealt = torch.where(current == _STOCK_SHOWN, dealt + _SHOWN_IN_HAND, dealt)
    owned.code.scatter_(1, cards, torch.where(mask[:, None], dealt, current))
    return owned.replace(
        stock_pos=owned.stock_pos + per_deal * mask,
        in_hands=owned.in_hands + per_deal * mask,
        hand_sizes=owned.hand_sizes + HAND_SIZE * mask[:, None],
        turn=torch.where(mask, first, owned.turn),
    )


def end_hands_(
    t: Tables, owned: BatchState, mask: torch.Tensor
) -> tuple[BatchState, dict[str, torch.Tensor], torch.Tensor, torch.Tensor]:
    """End the hand of the games in ``mask`` (and deal the next one where the match goes on):
    returns the new state, the hand results (B, sides), whether each episode ended, and its
    winner (-1: none or a draw). Writes ``owned.code`` and ``owned.deck`` in place."""
    B, S, dev = t.batch_size, t.num_sides, t.device
    idx = mask.nonzero().squeeze(1)
    if idx.numel() == B:  # every hand ends (games in step: the common case): no sub-batch
        return finish_hands_(t, owned)
    sub, result, done, winner = finish_hands_(t, take(owned, idx))
    # Every key's rows in one copy: (keys, k, S) into (keys, B, S).
    spread = torch.zeros(len(result), B, S, dtype=torch.int64, device=dev).index_copy_(1, idx, torch.stack(list(result.values())))
    hand_result = dict(zip(result, spread.unbind(0)))
    return (
        put_(owned, idx, sub),
        hand_result,
        torch.zeros(B, dtype=torch.bool, device=dev).index_copy(0, idx, done),
        torch.full((B,), -1, dtype=torch.int64, device=dev).index_copy(0, idx, winner),
    )


def finish_hands_(
    t: Tables, owned: BatchState
) -> tuple[BatchState, dict[str, torch.Tensor], torch.Tensor, torch.Tensor]:
    """R19 sweep, R20–R23 scoring, R24–R26 match end and R5 next dealer, for every game of
    ``owned`` (a sub-batch whose hands just ran out of cards); the games whose match goes on
    get their next hand. Writes ``owned.deck`` in place."""
    settings = t.settings
    # R19: the last capturer (the dealer's side as a safety net) takes what is left.
    taker = torch.where(owned.last_capturer >= 0, owned.last_capturer, t.side_of[owned.dealer])
    sweep = owned.pile_size > 0
    taker_onehot = (taker[:, None] == t.side_ids) * sweep[:, None]  # (k, S)
    code = t.relabel.index_select(0, (((taker + 1) * sweep)[:, None] * t.num_codes + owned.code).view(-1))
    counts = owned.side_counts.clone()
    counts[:, Counter.CAPTURED] += taker_onehot * owned.pile_size[:, None]
    counts[:, Counter.CARD_POINTS] += taker_onehot * (owned.pile_points_public + owned.pile_points_hidden)[:, None]

    # R21: MAJORITY_POINTS for strictly the most cards; R22 totals.
    cards = counts[:, Counter.CAPTURED]
    is_best = cards == cards.max(1, keepdim=True).values
    majority = is_best * (is_best.sum(1, keepdim=True) == 1) * MAJORITY_POINTS
    total = counts[:, Counter.CARD_POINTS] + majority + counts[:, Counter.PISTI_POINTS]
    if settings.bluff:  # R22: every bluff point received counts too
        total = total + counts[:, Counter.BLUFF_POINTS]
    computed = {"cards": cards, "majority": majority, "total": total}
    rows = {**COUNTED_RESULT_ROWS, **(BLUFF_RESULT_ROWS if settings.bluff else {})}
    hand_result = {key: computed[key] if key in computed else counts[:, rows[key]] for key in t.result_keys}
    # The hand folds into the match total, all of it public now (R30): public_total stays
    # "match total + this hand's public points", as Game.public_total.
    counts[:, Counter.MATCH_SCORES] += total
    counts[:, Counter.PUBLIC_POINTS] = 0
    scores = counts[:, Counter.MATCH_SCORES]

    # R25, R26: does the episode end here?
    top2 = scores.topk(2, dim=1).values
    unique = top2[:, 0] > top2[:, 1]
    if settings.target is None:
        done = torch.ones_like(unique)
    else:
        done = unique & (top2[:, 0] >= settings.target) & (top2[:, 0] - top2[:, 1] >= settings.win_margin)
    winner = torch.where(done & unique, scores.argmax(1), -1)
    zeros = torch.zeros_like(owned.pile_size)
    owned = owned.replace(
        code=code.view_as(owned.code),
        side_counts=counts,
        pile_size=zeros,
        pile_hidden=zeros,
        pile_points_public=zeros,
        pile_points_hidden=zeros,
        hands_completed=owned.hands_completed + 1,
    )
    # The match goes on where nobody won yet: the first player deals next (R5).
    owned = start_hands_(t, owned, ~done, new_episode=torch.zeros_like(done))
    return owned, hand_result, done, winner


def start_hands_(
    t: Tables,
    owned: BatchState,
    mask: torch.Tensor,
    new_episode: torch.Tensor,
    decks: torch.Tensor | None = None,
    dealers: torch.Tensor | None = None,
) -> BatchState:
    """Deal a new hand to the games in ``mask``; where ``new_episode`` too, a new episode
    starts (scores to 0, a dealer drawn from the seed or taken from ``dealers``). ``decks``
    and ``dealers``: optional (B, 52) and (B,) given first-hand decks and dealers. Writes
    ``owned.code`` and ``owned.deck`` in place."""
    idx = mask.nonzero().squeeze(1)
    if idx.numel() == 0:
        return owned
    if idx.numel() == t.batch_size:  # every game (games in step: the common case): no sub-batch
        return new_hands(t, owned, new_episode, decks, dealers)
    fresh = new_hands(
        t,
        take(owned, idx),
        new_episode[idx],
        None if decks is None else decks[idx],
        None if dealers is None else dealers[idx],
    )
    return put_(owned, idx, fresh)


def new_hands(
    t: Tables,
    state: BatchState,
    new_episode: torch.Tensor,
    decks: torch.Tensor | None,
    dealers: torch.Tensor | None,
) -> BatchState:
    """A new hand for every game of ``state`` (a sub-batch): R5 dealer, R6 deal, R7 Jacks on
    top, R28 shown stock bottom. Returns fresh tensors where anything changes."""
    n = t.num_players
    episode = state.episode + new_episode
    hands_completed = torch.where(new_episode, 0, state.hands_completed)
    if decks is None:
        deck, attempt = hashed_decks(t.seed, state.slot, episode, hands_completed, t.rank, t.settings.show_stock_bottom)
    else:
        deck, attempt = decks, torch.zeros_like(state.attempt)
    if dealers is None:
        dealers = first_dealers(t.seed, state.slot, episode, n)
    dealer = torch.where(new_episode, dealers, t.next_seat.index_select(0, state.dealer))

    # R6.1 and R7: table cards; Jacks on top slide under the pile and stay public.
    table = deck[:, :TABLE_SIZE]
    jack_on = t.rank[table] == JACK
    leading_jacks = torch.cumprod(jack_on.flip(1).long(), 1).sum(1)  # Jacks on top, from the last table card down
    top_pos = TABLE_SIZE - 1 - leading_jacks  # the card left face up
    position = torch.arange(TABLE_SIZE, device=t.device)
    is_top = position == top_pos[:, None]
    is_public_jack = position > top_pos[:, None]
    is_hidden = position < top_pos[:, None]
    table_codes = torch.where(is_top, loc.PILE_UP, torch.where(is_public_jack, loc.PILE_JACK, loc.PILE_HIDDEN))
    code = torch.full_like(state.code, _IN_STOCK)
    code = code.scatter(1, table, (table_codes * CODE_WIDTH + loc.NOBODY).to(CODE_DTYPE))
    if t.settings.show_stock_bottom:  # R28: the deck's last card is shown
        code = code.scatter(1, deck[:, -1:], loc.STOCK_SHOWN * CODE_WIDTH + loc.NOBODY)
    table_points = t.points[table]

    counts = torch.zeros_like(state.side_counts)
    counts[:, Counter.MATCH_SCORES] = state.side_counts[:, Counter.MATCH_SCORES] * ~new_episode[:, None]
    zeros = torch.zeros_like(state.turn)
    fresh = state.replace(
        code=code,
        deck=deck,
        stock_pos=zeros + TABLE_SIZE,
        dealer=dealer,
        in_hands=zeros,
        hand_sizes=torch.zeros_like(state.hand_sizes),
        top=table.gather(1, top_pos[:, None]).squeeze(1),
        pile_size=zeros + TABLE_SIZE,
        pile_hidden=top_pos,
        pile_points_public=(table_points * (is_top | is_public_jack)).sum(1),
        pile_points_hidden=(table_points * is_hidden).sum(1),
        last_capturer=zeros - 1,
        side_counts=counts,
        reward_base=state.reward_base * ~new_episode[:, None],
        hands_completed=hands_completed,
        episode=episode,
        attempt=attempt,
    )
    return deal_(t, fresh, torch.ones_like(new_episode))
