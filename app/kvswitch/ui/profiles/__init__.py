"""Profiles: the cards, the gallery, the editor and the diff shown before a switch."""
