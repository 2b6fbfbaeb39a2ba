-- The regions whose plans read some number nationally (activation_phone_idd runs once for each).
SELECT DISTINCT region FROM phone_steps WHERE national IS NOT NULL ORDER BY region
