"""Tests of ``dream.landing``."""
