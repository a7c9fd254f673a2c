"""Tests of ``dream.gates``."""
