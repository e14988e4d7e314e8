"""core (pure Python, no Qt)."""
