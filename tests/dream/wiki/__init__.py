"""Tests of ``dream.wiki``."""
