"""Tests of ``memoryfs``."""
