"""Tests of ``dream.language``."""
