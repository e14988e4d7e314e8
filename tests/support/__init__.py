"""Test support shared by every test directory (``tests/`` is on ``sys.path`` via tests/conftest.py)."""
