"""Memory health: lineage verdicts, the overall verdict and the canary."""
