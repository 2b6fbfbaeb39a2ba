"""The plumbing the local sandboxes share: ``platform_sandbox`` (the Graph API) and ``payments_sandbox``
(the card-payment provider's API).

Dev and test only, like the sandboxes: never shipped. Only what is the same in both lives here (the
adjustable clock, the fault queue, the request log, the admin routes over them, serving on a local
port); what each API says and does (errors, fault kinds, headers, webhooks) stays in its sandbox.
"""
