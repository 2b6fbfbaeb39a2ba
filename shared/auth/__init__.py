"""Authentication: API keys for the prediction surface, JWTs for the dashboard surface."""
