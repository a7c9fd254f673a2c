"""Tests of ``dream``."""
