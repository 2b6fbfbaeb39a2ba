"""Data access: the only code that touches boto3.

Single-table design on the main table (``pk``/``sk`` plus ``gsi1pk``/``gsi1sk``):

| item | pk | sk | gsi1pk / gsi1sk |
|---|---|---|---|
| organization | ``ORG#<org>`` | ``META`` | |
| dashboard user -> org | ``USER#<sub>`` | ``META`` | |
| API key | ``APIKEY#<key_id>`` | ``META`` | ``ORG#<org>#APIKEYS`` / ``<created>#<key_id>`` |
| the organization's key list | ``APIKEY#ORG#<org>`` | ``<key_id>`` | |
| model | ``ORG#<org>`` | ``MODEL#<name>`` | |
| audience | ``ORG#<org>`` | ``AUDIENCE#<id>`` | ``AUDIENCES#in_progress`` / ``<updated>#<org>#<id>`` |
| starts of an action in a window | ``ORG#<org>`` | ``LIMIT#<action>#<window>`` | |
| a checkout ended unpaid | ``ORG#<org>`` | ``CHECKOUT#<id>`` | ``ORG#<org>#UNPAID`` / ``<ended>#<id>`` |
"""
