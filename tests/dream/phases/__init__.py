"""Tests of ``dream.phases``."""
