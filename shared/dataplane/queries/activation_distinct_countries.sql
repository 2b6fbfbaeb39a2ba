-- Every distinct country cell of the users (NULL included): few, so the Python normaliser decides each.
SELECT DISTINCT country FROM users
