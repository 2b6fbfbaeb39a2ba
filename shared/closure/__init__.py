"""Account closure (issue 9, item 12)."""
