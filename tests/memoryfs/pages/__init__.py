"""Tests of ``memoryfs.pages``."""
