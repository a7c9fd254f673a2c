"""Forgetting for good: the deletion log, scrubbing, redaction and the history purge."""
