"""Tests of ``memoryfs.read``."""
