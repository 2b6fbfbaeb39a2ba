"""Card payments for the hosted quick-pay checkout: the organization's connected card-payment account,
the checkout pages and sessions, the provider's webhook events, and the orders they pay for.

``provider`` is the one module that talks to the card-payment provider (docs/payments-notes.md); the
rest works on the records and takes the provider, stores and cipher as collaborators.
"""
