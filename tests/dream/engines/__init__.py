"""Tests of ``dream.engines``."""
