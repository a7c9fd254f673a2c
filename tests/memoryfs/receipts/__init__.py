"""Tests of ``memoryfs.receipts``."""
