"""Tests of ``dream.engines.embedded``."""
