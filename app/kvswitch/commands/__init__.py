"""CLI sub-commands of the switching engine."""
