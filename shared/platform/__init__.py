"""The advertising platform (Meta Graph / Marketing API) client: the only code that touches httpx."""
