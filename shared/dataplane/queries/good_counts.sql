-- Good rows per file, and the latest order.
SELECT
    (SELECT count(*) FROM customers) AS customers,
    (SELECT count(*) FROM products) AS products,
    (SELECT count(*) FROM orders) AS orders,
    (SELECT max("timestamp") FROM orders) AS orders_end
