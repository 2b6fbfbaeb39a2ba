-- How many rows the loaded users file has.
SELECT count(*) AS users FROM users_input
