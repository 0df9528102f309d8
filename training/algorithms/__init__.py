"""Learning algorithms beside the PPO trainer, each on the batched engine, each a command with
the flags of [training.algorithms.recipe][] so that the learning protocol
([training.learning][]) can compare them seed for seed. [training.algorithms.hands][] plays the
self-play hands the value-based ones learn from."""
