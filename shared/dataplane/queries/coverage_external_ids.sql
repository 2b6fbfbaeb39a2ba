-- How many of the sync's good customers have an external id (sent as EXTERN_ID instead of user_id).
SELECT count(external_id) AS customers FROM customers
