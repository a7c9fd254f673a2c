"""Tests of ``memoryfs.validate``."""
