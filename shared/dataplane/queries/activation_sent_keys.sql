-- The other match keys the upload sends (identifiers.EXTRA_SCHEMA): those some user has a usable
-- value for (key_rules, every distinct value decided).
SELECT DISTINCT key FROM key_rules WHERE value <> ''
