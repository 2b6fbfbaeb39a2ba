"""The connection between an organization and its advertising-platform ad account.

See docs/service-contract.md §2.6, §3.
"""
