"""Fit a policy network to search targets: regress each legal card's rollout value.

The network is the policy's own architecture (`training.trainer.network.PolicyNetwork`),
started from the policy's weights, with its output read as card values in points: trained on
`training.distill.targets.SearchTargets`, it learns ``E[q(card) | observation]`` up to a constant
per position (the loss compares values centred over the position's legal cards, so the hand's
points so far, the same for every card, cost nothing). Playing its argmax is one step of policy
improvement on the rollout policy, the search's step amortised into the network.

The held-out estimate of what the step gains is exact in expectation: on each held-out position,
``q[argmax] - q[policy card]`` is the rollout advantage of the fitted choice over the policy's
(`decision_gain`).
"""

from __future__ import annotations

import copy
from typing import Any

import torch

from pisti_env.batched.compact import expand

from .targets import SearchTargets


def card_values(network: torch.nn.Module, targets: SearchTargets, rows: torch.Tensor, card_features: int) -> torch.Tensor:
    """(rows, HAND_SIZE) the network's values of each position's listed cards (padding: 0)."""
    out = network(expand(targets.observation[rows], card_features))
    cards = targets.cards[rows]
    return torch.where(cards >= 0, out.gather(1, cards.clamp(min=0)), torch.zeros((), dtype=out.dtype))


def centred(values: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """``values`` minus their mean over each position's legal cards (``valid``); 0 where padded."""
    mean = (values * valid).sum(1, keepdim=True) / valid.sum(1, keepdim=True)
    return torch.where(valid, values - mean, torch.zeros((), dtype=values.dtype))


def centred_loss(pred: torch.Tensor, q: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Mean squared error of the values centred over each position's legal cards."""
    return ((centred(pred, valid) - centred(q, valid)) ** 2).sum() / valid.sum()


def policy_column(targets: SearchTargets, rows: torch.Tensor) -> torch.Tensor:
    """(rows,) the column of the policy's own card among each position's listed cards."""
    return (targets.cards[rows] == targets.policy_card[rows, None]).float().argmax(1)


def fitted_choice(pred: torch.Tensor, targets: SearchTargets, rows: torch.Tensor, margin: float = 0.0) -> torch.Tensor:
    """(rows,) the column of the card played on positions ``rows``: the best-valued one (ties:
    the first listed) where its value beats the policy's card by more than ``margin`` points,
    else the policy's card."""
    pred = torch.where(targets.cards[rows] >= 0, pred, torch.tensor(-torch.inf))
    best = pred.argmax(1)
    base = policy_column(targets, rows)
    better = pred.gather(1, best[:, None])[:, 0] - pred.gather(1, base[:, None])[:, 0] > margin
    return torch.where(better, best, base)


def decision_gain(pred: torch.Tensor, targets: SearchTargets, rows: torch.Tensor, margin: float = 0.0) -> torch.Tensor:
    """(rows,) ``q[fitted choice] - q[policy card]`` on positions ``rows``: the rollout
    advantage of the fitted choice (`fitted_choice`) over the policy's own."""
    q = targets.q[rows]
    base = policy_column(targets, rows)
    chosen = fitted_choice(pred, targets, rows, margin)
    return q.gather(1, chosen[:, None])[:, 0] - q.gather(1, base[:, None])[:, 0]


def improvement_loss(logits: torch.Tensor, old_logits: torch.Tensor, q: torch.Tensor, valid: torch.Tensor,
                     kl_coef: float) -> torch.Tensor:
    """Regularised policy improvement over the legal cards: minus the expected centred value
    under the new policy, plus ``kl_coef`` times KL(old || new). Its minimiser is
    ``old * exp(advantage / kl_coef)`` (normalised), reached through noisy ``q`` by averaging."""
    neg = torch.tensor(-torch.inf)
    logp = torch.log_softmax(torch.where(valid, logits, neg), 1)
    old = torch.softmax(torch.where(valid, old_logits, neg), 1)
    expected = (logp.exp() * centred(q, valid)).sum(1)
    kl = (old * (torch.log(old.clamp_min(1e-12)) - torch.where(valid, logp, torch.zeros(())))).sum(1)
    return (kl_coef * kl - expected).mean()


def fit(
    network: torch.nn.Module,
    train: SearchTargets,
    held_out: SearchTargets,
    card_features: int,
    epochs: int = 4,
    batch_size: int = 1024,
    learning_rate: float = 3e-4,
    seed: int = 0,
    objective: str = "values",
    kl_coef: float = 1.0,
    log: Any = print,
) -> list[dict[str, float]]:
    """Train ``network`` in place on ``train``; after each epoch, log the held-out loss and the
    mean decision gain (points a decision; a hand has about 18 a seat with 2 players). Returns
    the per-epoch metrics.

    ``objective``: ``"values"`` regresses the centred card values (`centred_loss`);
    ``"improve"`` moves the policy's own logits toward the regularised improvement
    (`improvement_loss`, anchored to the starting network by ``kl_coef``)."""
    if objective not in ("values", "improve"):
        raise ValueError(f"objective must be 'values' or 'improve', got {objective!r}")
    old = copy.deepcopy(network).eval() if objective == "improve" else None
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(network.parameters(), lr=learning_rate)
    metrics = []
    for epoch in range(epochs):
        network.train()
        order = torch.randperm(len(train), generator=generator)
        total = 0.0
        for start in range(0, len(train), batch_size):
            rows = order[start : start + batch_size]
            pred = card_values(network, train, rows, card_features)
            valid = train.cards[rows] >= 0
            if old is None:
                loss = centred_loss(pred, train.q[rows], valid)
            else:
                with torch.no_grad():
                    old_pred = card_values(old, train, rows, card_features)
                loss = improvement_loss(pred, old_pred, train.q[rows], valid, kl_coef)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(rows)
        row = {"epoch": epoch + 1, "train_loss": total / len(train), **evaluate(network, held_out, card_features)}
        metrics.append(row)
        log(" ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
    return metrics


def evaluate(network: torch.nn.Module, held_out: SearchTargets, card_features: int,
             margins: tuple[float, ...] = (0.0, 0.5, 1.0, 2.0), batch_size: int = 8192) -> dict[str, float]:
    """The held-out centred loss; for each margin (`fitted_choice`) the mean decision gain, its
    standard error and how often the fitted choice departs from the policy's."""
    network.eval()
    loss, preds = 0.0, []
    with torch.no_grad():
        for start in range(0, len(held_out), batch_size):
            rows = torch.arange(start, min(start + batch_size, len(held_out)))
            pred = card_values(network, held_out, rows, card_features)
            loss += float(centred_loss(pred, held_out.q[rows], held_out.cards[rows] >= 0)) * len(rows)
            preds.append(pred)
    pred, rows = torch.cat(preds), torch.arange(len(held_out))
    base = policy_column(held_out, rows)
    row: dict[str, float] = {"held_out_loss": loss / len(held_out)}
    for margin in margins:
        g = decision_gain(pred, held_out, rows, margin)
        row[f"gain@{margin:g}"] = float(g.mean())
        row[f"se@{margin:g}"] = float(g.std() / len(g) ** 0.5)
        row[f"departs@{margin:g}"] = float((fitted_choice(pred, held_out, rows, margin) != base).float().mean())
    return row
