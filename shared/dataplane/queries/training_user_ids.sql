-- training.npz's user_ids: every customer's id, sorted (each order's user is a customer).
SELECT user_id FROM customers ORDER BY user_id
