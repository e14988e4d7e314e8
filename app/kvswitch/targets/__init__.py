"""targets (pure Python, no Qt)."""
