"""The LLM engine: Dream thinks with an OpenAI-compatible chat model."""
