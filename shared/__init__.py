"""The service's library: domain logic, repositories, platform client and ML scoring.

Import direction: ``functions/*/handler.py`` -> ``shared`` logic -> ``shared`` repositories and clients.
Only repositories and clients touch boto3 or httpx.
"""
