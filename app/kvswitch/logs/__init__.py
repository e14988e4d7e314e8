"""logs (pure Python, no Qt)."""
