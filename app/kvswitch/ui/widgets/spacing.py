"""The window's spacing: one 8 px grid, with a 4 px half step for rows that belong together.

Every margin, spacing and padding in the ui package is a multiple of ``HALF`` (checked by
``tests/ui/test_design_grid.py``), so panels line up edge to edge wherever they sit: ``UNIT`` between
controls, ``HALF`` between a field and its own error line, ``2 * UNIT`` off the window's edge and around
an empty state, ``3 * UNIT`` around a page that stands alone.
"""

from __future__ import annotations

#: one grid unit: between controls, inside a panel's frame
UNIT = 8
#: the half step: a field and its own error or hint line, the cards of one list
HALF = UNIT // 2
#: off the window's edge, around an empty state
EDGE = 2 * UNIT
#: around a page that stands alone (the welcome page, the setup assistant)
PAGE = 3 * UNIT
