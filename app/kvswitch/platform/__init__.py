"""platform (pure Python, no Qt)."""
