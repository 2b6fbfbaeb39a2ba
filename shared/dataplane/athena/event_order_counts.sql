/* How many new orders there are, and how many of them are inside the window (numbered). */
SELECT
  COUNT(*) AS new_orders,
  COUNT(seq) AS in_window
FROM event_new_orders
