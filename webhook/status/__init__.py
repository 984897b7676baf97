"""``webhook status`` (also ``kubectl grove-sharing status``): "why is my pod Pending?" in one command."""
