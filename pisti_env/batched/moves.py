"""One move of every game of the batch: a face-up play (R9–R17) and, with the bluff variant
(R29), a face-down play claiming a pişti or the answer to a claim.

Pure functions of ``(tables, state, actions)``: they write only into tensors they create, and
the next state's ``code`` is always a fresh tensor, which the caller owns.
"""

from __future__ import annotations

import torch

from ..rules import locations as loc
from ..rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from ..rules.cards import JACK, NUM_CARD_IDS
from ..rules.counters import Counter
from ..rules.scoring import BLUFF_STAKE, CHALLENGE_FACTOR, JACK_STAKE_FACTOR
from .state import CODE_DTYPE, CODE_WIDTH, FIELDS, BatchState, put_, select, take
from .tables import PILE_CLASSES, Tables

CLAIM_CARDS = 2  # a taken claim captures two cards: the lone card and the face-down one (R29)


def play_face_up(t: Tables, state: BatchState, a: torch.Tensor) -> BatchState:
    """Every game's seat to move plays card ``a`` face up (R9–R17); the turn passes to the next
    seat (the caller deals or ends the hand when the hands are empty). Returns the next state,
    whose ``code`` is a fresh tensor (the caller owns it); ``state`` is not written.

    Few operations on purpose (the step's cost at small batches is their count): the play's
    outcome (capture, pişti points and counts, R10–R17) is one row of ``t.play``, the codes
    and side of the seat's card one row of ``t.seat_play``."""
    seat, top, pile = state.turn, state.top, state.pile_size
    in_hands = state.in_hands - 1
    key = (a * NUM_CARD_IDS + top) * PILE_CLASSES + pile.clamp(max=PILE_CLASSES - 1)
    if not t.settings.last_card_pisti:  # R16: the table tells the hand's very last card apart
        key = key * 2 + ((in_hands == 0) & (state.stock_pos == NUM_CARD_IDS))
    capture, pisti_points, pistis, doubles = t.play.index_select(0, key).unbind(1)
    relabel_at, played_code, side = t.seat_play.index_select(0, seat * 2 + capture).unbind(1)
    side = side.long()

    # Card movements: a capture relabels the pile's cards as the side's captures (the
    # never-turned ones stay hidden, R8; row 0 of ``relabel`` keeps every code); the played
    # card goes on the pile or to the side.
    code = t.relabel.index_select(0, (state.code + relabel_at[:, None]).view(-1)).view(-1, NUM_CARD_IDS)
    code.scatter_(1, a[:, None], played_code[:, None])

    card_points = t.points.index_select(0, a)
    pile_points = state.pile_points_public + card_points  # the pile's public points with the card
    taken_public = pile_points * capture
    taken_hidden = state.pile_points_hidden * capture
    grown = pile + 1
    # Counter rows CAPTURED .. PISTI_POINTS of the seat's side change (in the flat counters:
    # ``t.face_up_counters`` + side); MATCH_SCORES and the bluff rows do not.
    deltas = torch.stack(
        [grown * capture, taken_public + taken_hidden, taken_public + pisti_points, pistis, doubles, pisti_points], 1
    )
    counts = state.side_counts.clone()
    counts.view(-1).index_add_(0, (t.face_up_counters + side[:, None]).view(-1), deltas.view(-1))
    kept = 1 - capture  # 1 where the pile stays
    taken = capture.bool()
    return state.replace(
        code=code,
        in_hands=in_hands,
        hand_sizes=state.hand_sizes.scatter_add(1, seat[:, None], t.minus_ones),
        top=torch.where(taken, top, a),
        pile_size=grown * kept,
        pile_hidden=state.pile_hidden * kept,
        pile_points_public=pile_points * kept,
        pile_points_hidden=state.pile_points_hidden * kept,
        last_capturer=torch.where(taken, side, state.last_capturer),
        side_counts=counts,
        turn=t.next_seat.index_select(0, seat),
    )


SUB_BATCH_FROM = 512  # CPU batch size from which the rarer kinds of move run on their games only


def bluff_move(t: Tables, state: BatchState, a: torch.Tensor) -> BatchState:
    """R29: each game takes its own kind of action: a face-up card (``a`` < ``FACE_DOWN``), a
    face-down one (below ``BELIEVE``) or an answer (``BELIEVE``, ``CHALLENGE``). The face-up
    play is computed for the whole batch; a claim or an answer, each taken in a few games of
    a step, for the whole batch too and kept where it was taken, or, in large CPU batches,
    only for the games that took it (a sub-batch: far less work than the whole batch and its
    selection, for a few more operations). The kinds nobody took are skipped. Out of place:
    the next state's ``code`` is a fresh tensor."""
    card = a % FACE_DOWN  # the card played, face up or down (meaningless for an answer)
    face_down = (a >= FACE_DOWN) & (a < BELIEVE)
    answer = a >= BELIEVE
    moved = play_face_up(t, state, card)
    sub_batches = t.batch_size >= SUB_BATCH_FROM and t.device.type == "cpu"
    for taken, move in (
        (face_down, lambda part, rows: play_face_down(t, part, card[rows])),
        (answer, lambda part, rows: answer_claim(t, part, a[rows] == CHALLENGE)),
    ):
        if not bool(taken.any()):
            continue
        if sub_batches:
            rows = taken.nonzero().squeeze(1)
            before = take(state, rows)
            moved = _put_moved(state, moved, rows, before, move(before, rows))
        else:
            moved = select(taken, move(state, slice(None)), moved)
    return moved


def _put_moved(
    state: BatchState, moved: BatchState, rows: torch.Tensor, before: BatchState, after: BatchState
) -> BatchState:
    """``moved`` (``state`` after the face-up play; its ``code`` fresh) with games ``rows``
    replaced by ``after``, those games moved another way from ``before`` (``take(state,
    rows)``): every field that either move changed is copied (`put_`; of the owned
    fields only ``code`` changes, and ``moved``'s is its own)."""
    changed = tuple(
        name for name in FIELDS
        if getattr(moved, name) is not getattr(state, name) or getattr(after, name) is not getattr(before, name)
    )
    return put_(moved, rows, after, changed)


def play_face_down(t: Tables, state: BatchState, card: torch.Tensor) -> BatchState:
    """R29: the seat to move plays ``card`` face down on the lone card, claiming a pişti; the
    seat that played the lone card answers next. The card is known to its player only
    (``loc.PILE_DOWN + seat``), or to everyone if it is the shown stock bottom (R28), and its
    playing-seat code stays NOBODY until it is shown. ``state`` may be any sub-batch of the
    engine's games (`bluff_move`)."""
    seat, at_card = state.turn, card[:, None]
    code = state.code.clone()
    held_shown = _one_code(code, card) // CODE_WIDTH == loc.HAND_SHOWN + seat  # R28
    location = torch.where(held_shown, loc.PILE_DOWN_SHOWN, loc.PILE_DOWN + seat)
    code.scatter_(1, at_card, (location * CODE_WIDTH + loc.NOBODY).to(CODE_DTYPE)[:, None])
    lone_player = (_one_code(state.code, state.top) % CODE_WIDTH).long() - loc.PLAYED_BY
    counts = _credit(t, state.side_counts, t.side_of.index_select(0, seat), {Counter.BLUFF_CLAIMS: 1})
    return state.replace(
        code=code,
        in_hands=state.in_hands - 1,
        hand_sizes=state.hand_sizes.scatter_add(1, seat[:, None], t.minus_ones[: seat.shape[0]]),
        side_counts=counts,
        claimant=seat,
        claim_card=card,
        turn=lone_player,
    )


def answer_claim(t: Tables, state: BatchState, challenge: torch.Tensor) -> BatchState:
    """R29: the seat to move believes (``challenge`` False) or challenges the pending claim;
    scored as ``pisti_env.game.claims.answer``. Then the seat after the claimant moves (the caller deals or
    ends the hand when the hands are empty). Rows without a claim compute garbage that the
    caller drops. ``state`` may be any sub-batch of the engine's games (`bluff_move`)."""
    claimant, card, lone = state.claimant.clamp(min=0), state.claim_card.clamp(min=0), state.top
    side = t.side_of.index_select(0, claimant)
    lone_rank = t.rank.index_select(0, lone)
    stake = BLUFF_STAKE
    if t.settings.bluff_jack_double:  # house rule: stakes doubled on a lone Jack
        stake = torch.where(lone_rank == JACK, BLUFF_STAKE * JACK_STAKE_FACTOR, BLUFF_STAKE)
    true_claim = t.rank.index_select(0, card) == lone_rank  # a Jack on a lone non-Jack is a bluff
    taken = ~challenge | true_claim  # believed or proven: both cards to the claimant's side
    caught = ~taken  # both cards stay, the shown card on top
    code = state.code.clone()
    # Everyone sees the card once challenged; a believed one stays hidden unless it is the
    # shown stock bottom (R28, R30).
    public_card = challenge | (_one_code(code, card) // CODE_WIDTH == loc.PILE_DOWN_SHOWN)
    location = torch.where(
        caught, loc.PILE_UP, torch.where(public_card, loc.CAPT_SHOWN + side, loc.CAPT_DOWN + claimant)
    )
    played_by = torch.where(challenge, loc.PLAYED_BY + claimant, loc.NOBODY)
    code.scatter_(1, card[:, None], (location * CODE_WIDTH + played_by).to(CODE_DTYPE)[:, None])
    lone_code = _one_code(code, lone)
    captured_lone = t.relabel.index_select(0, (side + 1) * t.num_codes + lone_code)  # a capture (R19)
    code.scatter_(1, lone[:, None], torch.where(taken, captured_lone, lone_code)[:, None])

    lone_points, card_points = t.points.index_select(0, lone), t.points.index_select(0, card)
    own_bluff = stake * torch.where(challenge, CHALLENGE_FACTOR, 1) * taken
    their_bluff = CHALLENGE_FACTOR * stake * caught  # the challenger's side alone (R29)
    public = (lone_points + card_points * public_card) * taken
    counts = _credit(
        t,
        state.side_counts,
        side,
        {
            Counter.CAPTURED: CLAIM_CARDS * taken,
            Counter.CARD_POINTS: (lone_points + card_points) * taken,
            Counter.PUBLIC_POINTS: public + own_bluff,
            Counter.PISTIS: taken,  # a believed or proven claim counts as a pişti
            Counter.BLUFF_POINTS: own_bluff,
            Counter.BLUFF_BELIEVED: ~challenge,
            Counter.BLUFF_CHALLENGED_TRUE: challenge & true_claim,
            Counter.BLUFF_CHALLENGED_FALSE: caught,
        },
    )
    answerer_side = t.side_of.index_select(0, state.turn)
    counts = _credit(t, counts, answerer_side, {Counter.PUBLIC_POINTS: their_bluff, Counter.BLUFF_POINTS: their_bluff})
    none = torch.full_like(claimant, -1)
    kept = caught.long()  # 1 where the pile stays (products: fewer operations than wheres)
    return state.replace(
        code=code,
        top=torch.where(taken, lone, card),
        pile_size=(state.pile_size + 1) * kept,
        pile_hidden=state.pile_hidden * kept,
        pile_points_public=(state.pile_points_public + card_points) * kept,
        pile_points_hidden=state.pile_points_hidden * kept,
        last_capturer=torch.where(taken, side, state.last_capturer),
        side_counts=counts,
        claimant=none,
        claim_card=none,
        turn=t.next_seat.index_select(0, claimant),
    )


def _one_code(code: torch.Tensor, card: torch.Tensor) -> torch.Tensor:
    """(B,) the code of card ``card[b]`` in each game (a gather: far cheaper than
    ``code[rows, card]``'s advanced indexing)."""
    return code.gather(1, card[:, None]).squeeze(1)


def _credit(t: Tables, counts: torch.Tensor, side: torch.Tensor, deltas: dict[Counter, torch.Tensor | int]) -> torch.Tensor:
    """``counts`` (B, rows, S) with ``deltas[row]`` (per game, or one int for all) added to
    each game's ``side``; out of place."""
    rows = torch.zeros(side.shape[0], t.num_rows, dtype=torch.int64, device=t.device)  # B, or a sub-batch's size
    for row, value in deltas.items():
        rows[:, row] = value
    return counts.scatter_add(2, side.view(-1, 1, 1).expand(-1, t.num_rows, 1), rows[:, :, None])
