"""Tests of ``memoryfs.index``."""
