"""Verify cache in the window: runs, real-client views, history, compare and ablation."""
