"""Learning from the search (issue 49, item 3): search targets on the batched engine
(`training.distill.targets`) and a policy network fitted to them (`training.distill.fit`).
``python -m training.distill`` runs both and reports the held-out decision gain; the measured
results are in docs/research/search.md."""
