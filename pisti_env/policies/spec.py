"""The policy network's description: one ``NetworkSpec``, built once, validated once.

A spec says everything needed to build a policy network: the game (its observation layout and
action space), the context MLP's widths and the options of the bluff variant's research heads
(``pisti_env.policies.claim_heads``, trained by ``training.bluff``). The trainer's
``TrainConfig.network_spec`` builds it from a run's config; a
checkpoint's ``metadata.json`` stores its fields as they are (``NetworkSpec.to_metadata``:
``hidden_sizes`` and, only where they are set, the head options), and the loader reads them
back (``NetworkSpec.from_metadata``), so a policy is rebuilt from exactly what trained it.
Every check of these fields and of their combinations is ``NetworkSpec.__post_init__``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from pisti_env.views.observation import ObservationLayout
from pisti_env.rules.settings import Settings, make_settings

# Bounds of the network a spec (and so a checkpoint) may ask for: a forged checkpoint must not
# make the loader allocate without limit.
MAX_HIDDEN_LAYERS = 8
MAX_HIDDEN_WIDTH = 4096
MAX_AVERAGE_HEADS = 4096  # members of a fictitious-play average (training.bluff.average)
MAX_CAPTURE_VALUE = 100.0  # points (claim_capture_value): far beyond any hand's card points (R20)

# The spec's fields stored in a checkpoint's metadata only where they differ from the default
# (a policy without research heads has none of them).
OPTIONAL = ("answer_hidden_sizes", "claim_hidden_sizes", "average_heads", "solved_claims", "claim_capture_value",
            "claim_capture_value_last_deal")


class SpecError(ValueError):
    """A bad spec field: ``field`` names it (a checkpoint's loader reports it as that metadata field)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field} {problem}")
        self.field = field
        self.problem = problem


def is_capture_value(value: object) -> bool:
    """Whether ``value`` is a solved claims' capture value: a number of points (not a bool) in
    [0, MAX_CAPTURE_VALUE]."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0.0 <= value <= MAX_CAPTURE_VALUE


def check_hidden_sizes(value: Any, field: str = "hidden_sizes", allow_empty: bool = False) -> tuple[int, ...]:
    """Hidden-layer widths within the bounds (1..``MAX_HIDDEN_LAYERS`` layers of
    1..``MAX_HIDDEN_WIDTH``; ``allow_empty``: none at all too), as a tuple; ``SpecError``
    naming ``field`` otherwise."""
    low = 0 if allow_empty else 1
    if not isinstance(value, (list, tuple)) or not low <= len(value) <= MAX_HIDDEN_LAYERS:
        raise SpecError(field, f"must be a list of {low}..{MAX_HIDDEN_LAYERS} layer widths, got {_brief(value)}")
    if any(isinstance(h, bool) or not isinstance(h, int) or not 1 <= h <= MAX_HIDDEN_WIDTH for h in value):
        raise SpecError(field, f"must hold widths in 1..{MAX_HIDDEN_WIDTH}, got {_brief(list(value))}")
    return tuple(value)


@dataclass(frozen=True)
class NetworkSpec:
    """What a policy network is (see the module docstring).

    Attributes:
        settings: the game; its observation layout sizes the input, its action space the output.
        hidden_sizes: widths of the context MLP (the last is the context vector).
        answer_hidden_sizes: bluff variant (R29): an answer head of its own with these hidden
            widths (``pisti_env.policies.claim_heads.ClaimView``); empty: none.
        claim_hidden_sizes: bluff variant: a claim head of its own
            (``pisti_env.policies.claim_heads.ClaimChanceView``); empty: none.
        average_heads: with both heads: the number of members of a fictitious-play average the
            two heads are (``pisti_env.policies.claim_heads.AveragedHead``); 0: plain heads.
        solved_claims: bluff variant: claims and answers from the solved claim game
            (``pisti_env.policies.claim_game``); not with either head.
        claim_capture_value: with ``solved_claims``: the points a believed claim's capture is
            worth beyond its stake.
        claim_capture_value_last_deal: with ``solved_claims``: the same on the hand's last deal;
            ``None``: ``claim_capture_value``.
    """

    settings: Settings
    hidden_sizes: tuple[int, ...] = (256, 256)
    answer_hidden_sizes: tuple[int, ...] = ()
    claim_hidden_sizes: tuple[int, ...] = ()
    average_heads: int = 0
    solved_claims: bool = False
    claim_capture_value: float = 0.0
    claim_capture_value_last_deal: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.settings, Settings):
            raise SpecError("settings", f"must be a pisti_env.rules.Settings, got {type(self.settings).__name__}")
        bluff = self.settings.bluff
        object.__setattr__(self, "hidden_sizes", check_hidden_sizes(self.hidden_sizes, "hidden_sizes"))
        for field, without in (("answer_hidden_sizes", "nothing is answered"), ("claim_hidden_sizes", "nothing is claimed")):
            sizes = check_hidden_sizes(getattr(self, field), field, allow_empty=True)
            object.__setattr__(self, field, sizes)
            if sizes and not bluff:
                raise SpecError(field, f"needs the bluff variant (R29): without it {without}")
        if isinstance(self.average_heads, bool) or not isinstance(self.average_heads, int) \
                or not 0 <= self.average_heads <= MAX_AVERAGE_HEADS:
            raise SpecError("average_heads", f"must be an integer in 0..{MAX_AVERAGE_HEADS}, got {_brief(self.average_heads)}")
        if self.average_heads and not (self.answer_hidden_sizes and self.claim_hidden_sizes):
            raise SpecError("average_heads", "needs both an answer head and a claim head (answer_hidden_sizes, "
                            "claim_hidden_sizes): averaged heads are those two")
        if not isinstance(self.solved_claims, bool):
            raise SpecError("solved_claims", f"must be true or false, got {_brief(self.solved_claims)}")
        if self.solved_claims and not bluff:
            raise SpecError("solved_claims", "needs the bluff variant (R29): without it nothing is claimed")
        if self.solved_claims and (self.answer_hidden_sizes or self.claim_hidden_sizes):
            raise SpecError("solved_claims", "plays the claims and answers itself: not with answer_hidden_sizes or "
                            "claim_hidden_sizes (solved claims replace the answer and claim heads)")
        for field in ("claim_capture_value", "claim_capture_value_last_deal"):
            value = getattr(self, field)
            if value is None and field.endswith("last_deal"):
                continue
            if not is_capture_value(value):
                raise SpecError(field, f"must be a number of points in [0, {MAX_CAPTURE_VALUE:g}], got {_brief(value)}")
            object.__setattr__(self, field, float(value))
            given = value is not None if field.endswith("last_deal") else value != 0
            if given and not self.solved_claims:
                raise SpecError(field, "is a solved claims' capture value: only with solved_claims (they need "
                                "solved_claims)")

    @property
    def layout(self) -> ObservationLayout:
        """The game's observation layout (input size, card features, named blocks)."""
        return ObservationLayout(self.settings)

    @property
    def has_heads(self) -> bool:
        """Whether the bluff extension adds anything to the network (a head or solved claims)."""
        return bool(self.answer_hidden_sizes or self.claim_hidden_sizes or self.solved_claims)

    def to_metadata(self) -> dict[str, Any]:
        """The spec as a checkpoint's metadata fields (JSON-ready): the game, the sizes the
        loader checks the observation against, ``hidden_sizes``, and the head options that are
        set (absent: their defaults)."""
        layout = self.layout
        fields: dict[str, Any] = {
            "settings": self.settings.to_dict(),
            "observation_size": layout.size,
            "card_features": layout.num_card_features,
            "hidden_sizes": list(self.hidden_sizes),
        }
        defaults = NetworkSpec(self.settings)
        for name in OPTIONAL:
            value = getattr(self, name)
            if value != getattr(defaults, name) or (name == "claim_capture_value" and self.solved_claims):
                fields[name] = list(value) if isinstance(value, tuple) else value
        return fields

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any], path: Path | None = None) -> "NetworkSpec":
        """The spec a checkpoint's metadata stores (``to_metadata``), checked; a bad field is
        a ``pisti_env.policies.metadata.CheckpointError`` naming ``path`` and the field
        (``path`` ``None``: the ``SpecError`` itself)."""
        values = {name: metadata[name] for name in ("hidden_sizes", *OPTIONAL) if name in metadata}
        try:
            # An option is stored only where it is set: present, it must be a real value.
            if "average_heads" in values and values["average_heads"] == 0:
                raise SpecError("average_heads", f"must be an integer in 1..{MAX_AVERAGE_HEADS}, got 0")
            if "claim_capture_value_last_deal" in values and values["claim_capture_value_last_deal"] is None:
                raise SpecError("claim_capture_value_last_deal",
                                f"must be a number of points in [0, {MAX_CAPTURE_VALUE:g}], got None")
            settings = metadata["settings"]
            settings = settings if isinstance(settings, Settings) else make_settings(**settings)
            return cls(settings=settings, **values)
        except SpecError as error:
            if path is None:
                raise
            from .metadata import CheckpointError

            raise CheckpointError(f"{path}: field {error.field!r}: {error.problem}") from None

    def replace(self, **changes: Any) -> "NetworkSpec":
        """A copy with ``changes``, checked again."""
        return dataclasses.replace(self, **changes)


def _brief(value: Any) -> str:
    """A short description of an untrusted value (never the whole of a large one)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
