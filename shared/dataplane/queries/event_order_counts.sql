-- How many new orders there are, and how many of them are inside the window (numbered).
SELECT count(*) AS new_orders, count(seq) AS in_window FROM event_new_orders
