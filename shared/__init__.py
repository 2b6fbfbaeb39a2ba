"""The service's library: domain logic, repositories, platform client and ML scoring.

Import direction: ``functions/*/handler.py`` -> ``shared`` entry (api, middleware, wiring) -> services
-> repositories and clients -> foundation -> ``shared.records``. Only repositories and clients touch
boto3 or httpx. ``tests/unit/test_structure.py`` states the layers and checks every import.
"""
