-- Every distinct country cell of the loaded users file (blank ones are NULL).
SELECT DISTINCT country FROM users_input
