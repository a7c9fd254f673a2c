"""Tests of ``dream.health``."""
