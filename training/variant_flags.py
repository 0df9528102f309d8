"""The rule-variant flags shared by the command lines (``pisti-train``, ``pisti-eval``): one
definition of each flag and of how it maps to the game settings of RULES.md's table."""

from __future__ import annotations

import argparse
from typing import Any


def add_variant_arguments(parser: argparse.ArgumentParser) -> None:
    """``--double-pisti``, ``--no-last-card-pisti``, ``--ten-diamonds-bonus``,
    ``--show-stock-bottom``, ``--bluff``, ``--bluff-jack-double`` (defaults: the standard rules)."""
    parser.add_argument("--double-pisti", type=int, default=20, choices=(20, 10, 0), help="R14 (default 20)")
    parser.add_argument("--no-last-card-pisti", action="store_true", help="R16: no pişti with the hand's last card")
    parser.add_argument("--ten-diamonds-bonus", type=int, default=0, choices=(0, 3), help="R17 (default 0)")
    parser.add_argument("--show-stock-bottom", action="store_true", help="R28")
    parser.add_argument("--bluff", action="store_true", help="the bluff variant (R29)")
    parser.add_argument("--bluff-jack-double", action="store_true", help="doubled bluff stakes on a lone Jack (R29)")


def variant_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The game settings the flags of :func:`add_variant_arguments` chose."""
    return {
        "double_pisti": args.double_pisti,
        "last_card_pisti": not args.no_last_card_pisti,
        "ten_diamonds_pisti_bonus": args.ten_diamonds_bonus,
        "show_stock_bottom": args.show_stock_bottom,
        "bluff": args.bluff,
        "bluff_jack_double": args.bluff_jack_double,
    }
