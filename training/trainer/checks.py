"""The checks of [`TrainConfig`][training.trainer.config.TrainConfig]'s fields, one per field: its
type and its range, as a ``TypeError`` or ``ValueError`` naming the field and what it allows.
(The combinations of fields are the config's own, `TrainConfig.__post_init__`.)"""

from __future__ import annotations

import math
from typing import Any, Callable

from pisti_env.policies.spec import MAX_AVERAGE_HEADS, MAX_CAPTURE_VALUE, SpecError, check_hidden_sizes


def _kind(name: str, value: Any, kinds: tuple[type, ...], allowed: str) -> None:
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        raise TypeError(f"TrainConfig.{name} must be {allowed}, got {value!r}")


def _number(kind: type, low: float | None = None, high: float | None = None, *, low_open: bool = False,
            optional: bool = False) -> Callable[[str, Any], None]:
    """A check: a ``kind`` (int, or float which takes ints too) in [low, high] (``low_open``: above low)."""
    kinds = (int,) if kind is int else (int, float)
    lo = "" if low is None else (f"> {low:g}" if low_open else f">= {low:g}")
    hi = "" if high is None else f"<= {high:g}"
    allowed = f"{'an int' if kind is int else 'a number'}{' ' + lo if lo else ''}{' and ' + hi if lo and hi else ' ' + hi if hi else ''}"
    allowed += " or None" if optional else ""

    def check(name: str, value: Any) -> None:
        if value is None and optional:
            return
        _kind(name, value, kinds, allowed)
        if not math.isfinite(value) or (low is not None and (value <= low if low_open else value < low)) \
                or (high is not None and value > high):
            raise ValueError(f"TrainConfig.{name} must be {allowed}, got {value!r}")
    return check


def _flag(name: str, value: Any) -> None:
    _kind(name, value, (bool,), "True or False")


def _text(optional: bool = False) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        if value is None and optional:
            return
        _kind(name, value, (str,), "a string" + (" or None" if optional else ""))
        if not value:
            raise ValueError(f"TrainConfig.{name} must be a non-empty string, got {value!r}")
    return check


def _sizes(allow_empty: bool) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        try:
            check_hidden_sizes(value, name, allow_empty)
        except SpecError as error:
            raise (TypeError if not isinstance(value, tuple) else ValueError)(f"TrainConfig.{error}") from None
    return check


def _specs(name: str, value: Any) -> None:
    if not isinstance(value, tuple) or not all(isinstance(v, str) and v for v in value):
        raise TypeError(f"TrainConfig.{name} must be a tuple of player specs (non-empty strings), got {value!r}")


def _choice(*allowed: str) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        if value not in allowed:
            raise ValueError(f"TrainConfig.{name} must be one of {', '.join(allowed)}, got {value!r}")
    return check


FIELD_CHECKS: dict[str, Callable[[str, Any], None]] = {
    "seed": _number(int, 0), "total_steps": _number(int, 1), "num_envs": _number(int, 1),
    "rollout_steps": _number(int, 1), "device": _text(), "torch_threads": _number(int, 0),
    "precision": _choice("auto", "bf16", "fp32"),
    "hidden_sizes": _sizes(False), "answer_hidden_sizes": _sizes(True), "freeze_answer_head": _flag,
    "claim_hidden_sizes": _sizes(True), "average_heads_every": _number(int, 0),
    "average_heads_size": _number(int, 2, MAX_AVERAGE_HEADS), "average_heads_magnet": _flag, "solved_claims": _flag,
    "claim_capture_value": _number(float, 0, MAX_CAPTURE_VALUE),
    "claim_capture_value_last_deal": _number(float, 0, MAX_CAPTURE_VALUE, optional=True),
    "value_hidden_sizes": _sizes(False), "privileged_value": _flag, "init_from": _text(optional=True),
    "learning_rate": _number(float, 0, low_open=True), "adam_eps": _number(float, 0, low_open=True),
    "anneal_lr": _flag, "gamma": _number(float, 0, 1), "gae_lambda": _number(float, 0, 1),
    "reward_scale": _number(float, 0, low_open=True), "num_minibatches": _number(int, 1),
    "update_epochs": _number(int, 1), "clip_coef": _number(float, 0, low_open=True), "clip_value": _flag,
    "ent_coef": _number(float, 0), "answer_ent_coef": _number(float, 0, optional=True), "vf_coef": _number(float, 0),
    "max_grad_norm": _number(float, 0, low_open=True), "norm_adv": _flag,
    "target_kl": _number(float, 0, low_open=True, optional=True), "magnet_coef": _number(float, 0),
    "magnet_every": _number(int, 0), "self_play_share": _number(float, 0, 1), "snapshot_every": _number(int, 0),
    "pool_size": _number(int, 1), "baselines": _specs, "pool_temperature": _number(float, 0, low_open=True),
    "pool_uniform_share": _number(float, 0, 1), "pool_margin_decay": _number(float, 0, 1, low_open=True),
    "eval_every": _number(int, 0), "eval_deals": _number(int, 1), "eval_baselines": _specs,
    "checkpoint_every": _number(int, 0), "checkpoint_minutes": _number(float, 0), "keep_checkpoints": _number(int, 1), "out_dir": _text(),
}
