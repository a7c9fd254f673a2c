"""The deterministic gate over a store tree: every rule, its findings and its fix hints."""
