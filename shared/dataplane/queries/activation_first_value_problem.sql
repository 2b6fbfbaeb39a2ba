-- The first user (in file order) whose value is not a customer value, and why (NULL: none).
SELECT value_problem FROM normalised WHERE value_problem IS NOT NULL ORDER BY pos LIMIT 1
