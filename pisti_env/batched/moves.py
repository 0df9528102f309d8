"""One move of every game of the batch: a face-up play (R9–R17) and, with the bluff variant
(R29), a face-down play claiming a pişti or the answer to a claim.

Pure functions of ``(tables, state, actions)``. Those whose names end in ``_`` update the
``code`` of the state they are given in place: give them only a state the caller owns
(:func:`pisti_env.batched.state.owned_copy`); the others write only into tensors they create.
"""

from __future__ import annotations

import torch

from .. import locations as loc
from ..actions import BELIEVE, CHALLENGE, FACE_DOWN
from ..cards import JACK, NUM_CARD_IDS, TEN_DIAMONDS
from ..counters import NUM_PLAIN_COUNTERS, Counter
from ..scoring import BLUFF_STAKE, CHALLENGE_FACTOR, DOUBLE_PISTI_POINTS, JACK_STAKE_FACTOR, PISTI_POINTS
from .state import CODE_DTYPE, CODE_WIDTH, BatchState, select
from .tables import Tables

CLAIM_CARDS = 2  # a taken claim captures two cards: the lone card and the face-down one (R29)


def play_face_up_(t: Tables, owned: BatchState, a: torch.Tensor) -> BatchState:
    """Every game's seat to move plays card ``a`` face up (R9–R17); the turn passes to the next
    seat (the caller deals or ends the hand when the hands are empty). Writes ``owned.code``
    in place and returns the next state, which holds that same tensor."""
    settings = t.settings
    seat = owned.turn
    side = t.side_of[seat]
    side_onehot = (side[:, None] == t.side_ids).long()  # (B, S); F.one_hot would sync to check
    seat_onehot = (seat[:, None] == t.seat_ids).long()  # (B, n)

    # R10, R11: a card of the top card's rank, or a Jack, takes a non-empty pile.
    rank = t.rank[a]
    is_jack = rank == JACK
    top_rank = t.rank[owned.top]
    capture = (owned.pile_size > 0) & ((rank == top_rank) | is_jack)
    in_hands = owned.in_hands - 1
    last_card = (in_hands == 0) & (owned.stock_pos == NUM_CARD_IDS)

    # R13–R17: piştis on a lone card.
    lone = capture & (owned.pile_size == 1)
    plain_pisti = lone & ~is_jack  # R13
    jack_on_jack = lone & is_jack & (top_rank == JACK)  # R14
    if not settings.last_card_pisti:  # R16
        plain_pisti = plain_pisti & ~last_card
        jack_on_jack = jack_on_jack & ~last_card
    dp = settings.double_pisti
    pisti_points = plain_pisti * PISTI_POINTS + jack_on_jack * dp
    if settings.ten_diamonds_pisti_bonus:  # R17
        with_ten = plain_pisti & ((a == TEN_DIAMONDS) | (owned.top == TEN_DIAMONDS))
        pisti_points = pisti_points + with_ten * settings.ten_diamonds_pisti_bonus
    counts_as_pisti = plain_pisti | (jack_on_jack & (dp == PISTI_POINTS))  # R14 worth a plain pişti
    counts_as_double = jack_on_jack & (dp == DOUBLE_PISTI_POINTS)

    # Card movements: a capture relabels the pile's cards as the side's captures (the
    # never-turned ones stay hidden, R8); the played card goes on the pile or to the side.
    code = owned.code
    takers = capture.nonzero().squeeze(1)
    if takers.numel():
        relabel = ((side[takers] + 1) * t.num_codes)[:, None] + code[takers]
        code[takers] = t.relabel.index_select(0, relabel.view(-1)).view(-1, NUM_CARD_IDS)
    location = torch.where(capture, loc.CAPT_SHOWN + side, loc.PILE_UP)
    code[t.rows, a] = (location * CODE_WIDTH + loc.PLAYED_BY + seat).to(CODE_DTYPE)

    card_points = t.points[a]
    taken_public = (owned.pile_points_public + card_points) * capture
    taken_hidden = owned.pile_points_hidden * capture
    deltas = torch.stack(
        [
            (owned.pile_size + 1) * capture,  # Counter.CAPTURED
            taken_public + taken_hidden,  # Counter.CARD_POINTS
            taken_public + pisti_points,  # Counter.PUBLIC_POINTS
            counts_as_pisti.long(),  # Counter.PISTIS
            counts_as_double.long(),  # Counter.DOUBLE_PISTIS
            pisti_points,  # Counter.PISTI_POINTS
            torch.zeros_like(a),  # Counter.MATCH_SCORES
        ],
        1,
    )
    if t.num_rows > NUM_PLAIN_COUNTERS:  # the bluff rows: a face-up play leaves them alone
        deltas = torch.nn.functional.pad(deltas, (0, t.num_rows - NUM_PLAIN_COUNTERS))
    return owned.replace(
        code=code,
        in_hands=in_hands,
        hand_sizes=owned.hand_sizes - seat_onehot,
        top=torch.where(capture, owned.top, a),
        pile_size=torch.where(capture, 0, owned.pile_size + 1),
        pile_hidden=torch.where(capture, 0, owned.pile_hidden),
        pile_points_public=torch.where(capture, 0, owned.pile_points_public + card_points),
        pile_points_hidden=torch.where(capture, 0, owned.pile_points_hidden),
        last_capturer=torch.where(capture, side, owned.last_capturer),
        side_counts=owned.side_counts + deltas[:, :, None] * side_onehot[:, None, :],
        turn=(seat + 1) % t.num_players,
    )


def bluff_move_(t: Tables, owned: BatchState, a: torch.Tensor) -> BatchState:
    """R29: each game takes its own kind of action: a face-up card (``a`` < ``FACE_DOWN``), a
    face-down one (below ``BELIEVE``) or an answer (``BELIEVE``, ``CHALLENGE``). Each kind is
    computed for the whole batch and kept where it was taken; the kinds nobody took are
    skipped. Writes ``owned.code`` in place (the face-up play)."""
    card = a % FACE_DOWN  # the card played, face up or down (meaningless for an answer)
    face_down = (a >= FACE_DOWN) & (a < BELIEVE)
    answer = a >= BELIEVE
    # Both read ``owned`` before the face-up play below updates its code in place.
    down = play_face_down(t, owned, card) if bool(face_down.any()) else None
    answered = answer_claim(t, owned, a == CHALLENGE) if bool(answer.any()) else None
    moved = play_face_up_(t, owned, card)
    if down is not None:
        moved = select(face_down, down, moved)
    if answered is not None:
        moved = select(answer, answered, moved)
    return moved


def play_face_down(t: Tables, state: BatchState, card: torch.Tensor) -> BatchState:
    """R29: the seat to move plays ``card`` face down on the lone card, claiming a pişti; the
    seat that played the lone card answers next. The card is known to its player only
    (``loc.PILE_DOWN + seat``), or to everyone if it is the shown stock bottom (R28), and its
    playing-seat code stays NOBODY until it is shown."""
    seat, rows = state.turn, t.rows
    code = state.code.clone()
    held_shown = code[rows, card] // CODE_WIDTH == loc.HAND_SHOWN + seat  # R28
    location = torch.where(held_shown, loc.PILE_DOWN_SHOWN, loc.PILE_DOWN + seat)
    code[rows, card] = (location * CODE_WIDTH + loc.NOBODY).to(CODE_DTYPE)
    lone_player = (state.code[rows, state.top] % CODE_WIDTH).long() - loc.PLAYED_BY
    claims = _deltas(t, {Counter.BLUFF_CLAIMS: torch.ones_like(seat)})
    return state.replace(
        code=code,
        in_hands=state.in_hands - 1,
        hand_sizes=state.hand_sizes - (seat[:, None] == t.seat_ids).long(),
        side_counts=state.side_counts + _to_side(t, claims, t.side_of[seat]),
        claimant=seat,
        claim_card=card,
        turn=lone_player,
    )


def answer_claim(t: Tables, state: BatchState, challenge: torch.Tensor) -> BatchState:
    """R29: the seat to move believes (``challenge`` False) or challenges the pending claim;
    scored as ``pisti_env.claims.answer``. Then the seat after the claimant moves (the caller deals or
    ends the hand when the hands are empty). Rows without a claim compute garbage that the
    caller drops."""
    rows = t.rows
    claimant, card, lone = state.claimant.clamp(min=0), state.claim_card.clamp(min=0), state.top
    side = t.side_of[claimant]
    stake = torch.full_like(lone, BLUFF_STAKE)
    if t.settings.bluff_jack_double:  # house rule: stakes doubled on a lone Jack
        stake = stake * torch.where(t.rank[lone] == JACK, JACK_STAKE_FACTOR, 1)
    true_claim = t.rank[card] == t.rank[lone]  # a Jack on a lone non-Jack is a bluff
    taken = ~challenge | true_claim  # believed or proven: both cards to the claimant's side
    caught = ~taken  # both cards stay, the shown card on top
    code = state.code.clone()
    card_code = code[rows, card]
    # Everyone sees the card once challenged; a believed one stays hidden unless it is the
    # shown stock bottom (R28, R30).
    public_card = challenge | (card_code // CODE_WIDTH == loc.PILE_DOWN_SHOWN)
    location = torch.where(
        caught, loc.PILE_UP, torch.where(public_card, loc.CAPT_SHOWN + side, loc.CAPT_DOWN + claimant)
    )
    played_by = torch.where(challenge, loc.PLAYED_BY + claimant, loc.NOBODY)
    code[rows, card] = (location * CODE_WIDTH + played_by).to(CODE_DTYPE)
    lone_code = code[rows, lone]
    captured_lone = t.relabel[(side + 1) * t.num_codes + lone_code]  # a capture (R19)
    code[rows, lone] = torch.where(taken, captured_lone, lone_code)

    lone_points, card_points = t.points[lone], t.points[card]
    own_bluff = stake * torch.where(challenge, CHALLENGE_FACTOR, 1) * taken
    their_bluff = CHALLENGE_FACTOR * stake * caught  # the challenger's side alone (R29)
    public = (lone_points + card_points * public_card) * taken
    claim_rows = _deltas(
        t,
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
    answer_rows = _deltas(t, {Counter.PUBLIC_POINTS: their_bluff, Counter.BLUFF_POINTS: their_bluff})
    answerer_side = t.side_of[state.turn]
    counts = state.side_counts + _to_side(t, claim_rows, side) + _to_side(t, answer_rows, answerer_side)
    none = torch.full_like(claimant, -1)
    return state.replace(
        code=code,
        top=torch.where(taken, lone, card),
        pile_size=torch.where(taken, 0, state.pile_size + 1),
        pile_hidden=torch.where(taken, 0, state.pile_hidden),
        pile_points_public=torch.where(taken, 0, state.pile_points_public + card_points),
        pile_points_hidden=torch.where(taken, 0, state.pile_points_hidden),
        last_capturer=torch.where(taken, side, state.last_capturer),
        side_counts=counts,
        claimant=none,
        claim_card=none,
        turn=(claimant + 1) % t.num_players,
    )


def _deltas(t: Tables, rows: dict[Counter, torch.Tensor]) -> torch.Tensor:
    """(B, rows of ``side_counts``) counter changes: the given rows, zero elsewhere."""
    zero = torch.zeros(t.batch_size, dtype=torch.int64, device=t.device)
    return torch.stack([rows.get(Counter(r), zero).long() for r in range(t.num_rows)], 1)


def _to_side(t: Tables, deltas: torch.Tensor, side: torch.Tensor) -> torch.Tensor:
    """(B, rows, S): per-game counter changes ``deltas`` (B, rows) credited to ``side``."""
    return deltas[:, :, None] * (side[:, None] == t.side_ids).long()[:, None, :]
