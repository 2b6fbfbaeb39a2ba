-- Customers without their rejected rows.
DELETE FROM customers WHERE record IN (SELECT record FROM errors WHERE kind = 'customers')
