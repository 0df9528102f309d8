"""What a person types at ``pisti-play``'s prompt: parsed (`parse_command`), then checked
against the seat's view and turned into an action id (`resolve_action`).

Accepted input (case does not matter):

* a card code (``10D``, ``js``) or the card's number in the hand (``2``): play it face up;
* ``d 7H`` / ``d 2`` (or ``down ...``): play it face down claiming a pişti (bluff variant, R29);
* ``b`` / ``believe``, ``c`` / ``challenge``: answer a claim (R29);
* ``?``: list the legal moves; ``h`` / ``hint``: what the shipped policy would play;
  ``help``: this list (the bluff commands only in the bluff variant); ``q`` / ``quit``: leave
  the game (after a confirmation).

Anything else raises `CommandError` saying why, and nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from ..views.view import SeatView
from ..rules.cards import card_to_symbol, card_to_text, parse_card

PLAY, DOWN, BELIEVE_CMD, CHALLENGE_CMD = "play", "down", "believe", "challenge"
LEGAL, HINT, HELP, QUIT = "legal", "hint", "help", "quit"

_HELP_PLAY = "Play a card: its code (10D, js) or its number in your hand (1, 2, ...).\n"
_HELP_BLUFF = "Bluff variant (R29): d 7H (or d 2) plays it face down claiming a pişti; b believes a claim, c challenges it.\n"
_HELP_COMMANDS = "?  legal moves    h  hint (what the shipped policy would play)    help  this text    q  quit"


def help_text(bluff: bool) -> str:
    """What ``help`` prints: the moves and commands of this game; the face-down play and the
    answers to a claim only in the bluff variant (``bluff``, R29), where they exist."""
    return _HELP_PLAY + (_HELP_BLUFF if bluff else "") + _HELP_COMMANDS

_WORDS = {
    "?": LEGAL, "h": HINT, "hint": HINT, "help": HELP, "q": QUIT, "quit": QUIT, "exit": QUIT,
    "b": BELIEVE_CMD, "believe": BELIEVE_CMD, "c": CHALLENGE_CMD, "challenge": CHALLENGE_CMD,
}


class CommandError(ValueError):
    """Input that is not a move or a command, or a move not allowed now; the message says why."""


@dataclass(frozen=True)
class Command:
    """One parsed input line.

    Attributes:
        kind: ``play``, ``down``, ``believe``, ``challenge``, ``legal``, ``hint``, ``help`` or ``quit``.
        card: the card id named by a code (``play``/``down``), else ``None``.
        number: the 1-based hand position named by a number (``play``/``down``), else ``None``.
    """

    kind: str
    card: int | None = None
    number: int | None = None


def _card_or_number(kind: str, text: str, original: str) -> Command:
    if text.isdigit():
        return Command(kind, number=int(text))
    try:
        return Command(kind, card=parse_card(text))
    except ValueError:
        raise CommandError(
            f"{original.strip()!r} is not a move: type a card code such as 10D or JS, its number in your hand, "
            "? for the legal moves or help"
        ) from None


def parse_command(text: str) -> Command:
    """The command ``text`` stands for (syntax only; `resolve_action` checks the move).

    Raises `CommandError` for empty or unknown input, naming what is accepted.
    """
    if not isinstance(text, str):
        raise TypeError(f"a command must be a str, got {type(text).__name__}")
    words = text.strip().lower().split()
    if not words:
        raise CommandError("nothing typed: type a card code (10D), its number in your hand, ? for the legal moves or help")
    if len(words) == 1 and words[0] in _WORDS:
        return Command(_WORDS[words[0]])
    if words[0] in ("d", "down"):
        if len(words) != 2:
            raise CommandError("a face-down play names one card: d 7H or d 2 (its number in your hand)")
        return _card_or_number(DOWN, words[1], text)
    if len(words) != 1:
        raise CommandError(f"{text.strip()!r} is not a move: one card at a time (10D or its number), or help")
    return _card_or_number(PLAY, words[0], text)


def _hand_text(hand: list[int]) -> str:
    return "  ".join(f"{i}) {card_to_symbol(c)}" for i, c in enumerate(hand, 1))


def resolve_action(command: Command, view: SeatView) -> int:
    """The action id of a ``play``/``down``/``believe``/``challenge`` command for the seat of
    ``view`` (whose turn it must be).

    Raises `CommandError` saying why the move is not allowed: a number outside the
    hand, a card not in the hand, a card while a claim waits for its answer, an answer without
    a claim, a face-down play outside the bluff variant or where no claim is allowed (R29).
    """
    legal = view.legal_actions
    if not legal:
        raise CommandError("it is not your turn")
    answering = legal == [BELIEVE, CHALLENGE]
    if command.kind in (BELIEVE_CMD, CHALLENGE_CMD):
        if not answering:
            raise CommandError("there is no claim to answer: b and c answer a face-down pişti claim (R29)")
        return BELIEVE if command.kind == BELIEVE_CMD else CHALLENGE
    if command.kind not in (PLAY, DOWN):
        raise CommandError(f"{command.kind!r} is not a move")
    if answering:
        claimant, lone = view.pending_claim  # type: ignore[misc]
        raise CommandError(f"seat {claimant} claims a pişti on {card_to_symbol(lone)}: answer first with "
                           "b (believe) or c (challenge)")
    hand = view.hand
    if command.number is not None:
        if not 1 <= command.number <= len(hand):
            raise CommandError(f"there is no card number {command.number}: your hand is {_hand_text(hand)}")
        card = hand[command.number - 1]
    else:
        card = command.card  # type: ignore[assignment]
        if card not in hand:
            raise CommandError(f"{card_to_symbol(card)} is not in your hand: your hand is {_hand_text(hand)}")
    if command.kind == PLAY:
        return card
    if not view.settings.bluff:
        raise CommandError("face-down plays belong to the bluff variant (R29, --bluff); this game plays face up only")
    if FACE_DOWN + card not in legal:
        raise CommandError(
            "you may play face down only on a lone table card played by the other side (R29)"
            + ("" if view.settings.last_card_pisti else ", and not with the hand's last card")
        )
    return FACE_DOWN + card


def legal_moves_text(view: SeatView) -> str:
    """The legal moves of the seat of ``view`` as the commands that make them."""
    legal = view.legal_actions
    if legal == [BELIEVE, CHALLENGE]:
        return "Legal moves: b (believe the claim)  c (challenge it)"
    hand = view.hand
    up = [f"{hand.index(a) + 1}) {card_to_symbol(a)}" for a in legal if a < FACE_DOWN]
    text = "Legal moves: " + "  ".join(up)
    down = [f"d {card_to_text(a - FACE_DOWN)}" for a in legal if FACE_DOWN <= a < BELIEVE]
    if down:
        text += "\nFace down, claiming a pişti (R29): " + "  ".join(down)
    return text
