-- No purchases were ever sent (the first sync, or none sent in full yet): `event_sent_orders` is empty.
CREATE OR REPLACE TABLE event_sent_orders (order_id VARCHAR)
