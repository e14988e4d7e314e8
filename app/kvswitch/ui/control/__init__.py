"""The typed controller, the one way from the views to the engines, and what it runs off the GUI thread."""
