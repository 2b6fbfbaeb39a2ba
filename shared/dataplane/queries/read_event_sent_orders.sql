-- The order ids of the dataset version whose purchases were last sent in full (issue 21), from its
-- orders.parquet, into `event_sent_orders`.
CREATE OR REPLACE TABLE event_sent_orders AS
SELECT DISTINCT order_id FROM read_parquet($path)
