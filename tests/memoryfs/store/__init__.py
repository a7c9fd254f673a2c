"""Tests of ``memoryfs.store``."""
