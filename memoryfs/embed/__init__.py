"""Sentence embeddings for hybrid recall: a local model or an OpenAI-compatible endpoint."""
