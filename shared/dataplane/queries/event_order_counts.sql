-- How many orders are new, how many of them are inside the window and sent (numbered), and how many
-- belong to customers who refused marketing (never sent, whatever their time).
SELECT
    count(*) AS new_orders,
    count(seq) AS in_window,
    sum(CASE WHEN refused THEN 1 ELSE 0 END) AS refused
FROM event_new_orders
