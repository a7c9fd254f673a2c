"""Tests of ``dream.evaluation``."""
