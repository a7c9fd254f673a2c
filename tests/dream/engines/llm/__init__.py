"""Tests of ``dream.engines.llm``."""
