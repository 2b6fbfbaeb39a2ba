"""Audiences: customer identifiers normalised and hashed per the platform's rules, quality reports,
upload batching with sessions, and CSV snapshots.

Nothing in this package logs or reports raw e-mails, phones or names.
"""
