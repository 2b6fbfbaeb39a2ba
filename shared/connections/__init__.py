"""The connection between an organization and its advertising-platform ad account (spec 2.6, 3)."""
