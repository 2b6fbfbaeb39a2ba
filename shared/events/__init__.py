"""Conversion events for the platform's Conversions API (docs/platform-notes.md §11, issue 21).

- ``building``: each event built once, as the JSON the platform takes, with an ``event_id`` derived
  from the order (or the site's session) so a resend repeats it and the platform keeps one; customer
  information normalised and hashed by the audiences' normaliser (``shared.audiences.preparation``,
  one implementation), pre-hashed values passed through.
- ``checks``: what the platform refuses, checked before a batch leaves, so one bad event does not sink
  the 999 others: too old (skipped, not sent), malformed (rejected with the reason).
- ``sending``: batches of the documented maximum through the platform client
  (``shared.platform.events``); a batch the platform refuses is split, and only what can succeed is
  sent again; a report of what was sent, skipped and rejected, and why.
"""
