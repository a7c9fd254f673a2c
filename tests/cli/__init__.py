"""Tests of ``cli``."""
