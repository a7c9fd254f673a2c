"""The rule-based language modules: word lists, sentences, cues, dates, entities. No model."""
