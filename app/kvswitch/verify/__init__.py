"""verify (pure Python, no Qt)."""
