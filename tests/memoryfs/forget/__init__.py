"""Tests of ``memoryfs.forget``."""
