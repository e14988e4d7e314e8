"""The Prompts and Skills pages: memory-file presets and skills for every client."""
